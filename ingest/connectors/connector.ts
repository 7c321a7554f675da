/**
 * What a connector is: the one piece that knows a kind of source. It lists the source's items
 * (a stable id, where it is, its type and size, and the source's own change signal) and fetches
 * an item's bytes into a local file; it validates a config by contacting the source. Parsing,
 * chunking, embedding, jobs, incremental sync and the deletion guard are the pipeline's, the same
 * for every connector.
 */
import type { Readable } from 'node:stream';
import type { StagedFile } from '../../objects/object-store.js';
import type { SourceType } from '../sources/types.js';

export interface SourceItem {
  /** Stable within the source: the same original keeps its id from run to run. */
  id: string;
  name: string;
  path: string;
  url: string | null;
  contentType: string;
  size: number | null;
  /** The source's change signal (ETag, md5, modified time, blob SHA, version); null: hash the bytes. */
  version: string | null;
}

export interface ConnectorContext {
  orgId: string;
  sourceId: string;
  /** The source's config, secrets in the clear (server side only). */
  config: Record<string, unknown>;
  /** State kept between runs of a schedule (a cursor, a last sync time); the connector may change it. */
  state: Record<string, unknown>;
  signal: AbortSignal;
}

/** The parts of a job file a connector fetches by. */
export interface ItemRef {
  file_name: string;
  file_path: string;
  content_type: string;
  storage_key?: string;
  item?: { id: string; url: string | null; version: string | null };
}

export interface Validation {
  samples: { title: string; url: string | null }[];
  warnings: string[];
}

/** Access tokens of stored connections (OAuth grants), refreshed before they are handed out. */
export interface ConnectionTokens {
  /** `fresh`: refresh the grant first (a run starts). */
  accessToken(orgId: string, connectionId: string, signal?: AbortSignal, fresh?: boolean): Promise<string>;
}

/** One item as the dashboard shows it before anything is ingested. */
export interface ItemInfo {
  name: string;
  size: number | null;
  content_type: string | null;
  modified_at: string | null;
  readable: boolean;
  /** Why it cannot be read, in words. */
  error?: string;
}

/** One connector per source type: the type makes a missing one a compile error. */
export type Connectors = Readonly<Record<SourceType, Connector>>;

export interface Connector {
  readonly type: SourceType;
  list(ctx: ConnectorContext): AsyncIterable<SourceItem>;
  fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile>;
  validate(ctx: ConnectorContext): Promise<Validation>;
  /** Whether originals stay where the service can serve them again (downloads). */
  readonly retainsOriginals: boolean;
  /** The largest item the source's config allows, bytes. */
  maxBytes(config: Record<string, unknown>): number;
  /** One item by the address the dashboard shows (s3://, gs://, gdrive://, https://): its metadata, read with the source's credentials. */
  describe?(ctx: ConnectorContext, uri: URL): Promise<ItemInfo>;
  /** One item's bytes as a stream (dashboard previews). */
  stream?(ctx: ConnectorContext, id: string): Promise<{ stream: Readable; contentType: string; size: number | null }>;
  /** The job is over (or stopped): what the connector kept for it (bytes read while listing) goes. */
  finished?(ctx: ConnectorContext): Promise<void>;
  /** What happens to an item over that size: the file is skipped (s3 says so), or fails file_too_large (default). */
  readonly oversize?: 'skip' | 'fail';
}
