/**
 * What the dashboard shows of an item before it is ingested: `s3://bucket/key`, `gs://bucket/object`,
 * `gdrive://fileId` and `https://...` addresses resolved through the same connectors, with the
 * credentials of the organization's sources that read that bucket or drive (a Drive file is
 * tried with each gdrive source until one can read it), and Drive files streamed for previews.
 */
import type { Readable } from 'node:stream';
import { badRequest, SableError } from '../../errors/codes.js';
import type { ConnectorContext, Connectors, ItemInfo } from '../connectors/connector.js';
import type { SourceType } from './types.js';
import type { SourceRecord, SourceStore } from './store.js';

const SCHEMES: Record<string, SourceType> = { 's3:': 's3', 'gs:': 'gcs', 'gdrive:': 'gdrive', 'http:': 'web', 'https:': 'web' };
const MAX_BATCH = 100;

export type PathInfo = ItemInfo & { source_path: string; source_id: string | null };

export class SourcePreviews {
  constructor(
    private readonly sources: SourceStore,
    private readonly connectors: Connectors,
  ) {}

  async info(orgId: string, path: string): Promise<PathInfo> {
    let uri: URL;
    try {
      uri = new URL(path);
    } catch {
      throw badRequest(`source_path '${path}' is not an address (s3://bucket/key, gs://bucket/object, gdrive://fileId or https://...)`);
    }
    const type = SCHEMES[uri.protocol];
    if (!type) throw badRequest(`source_path scheme ${uri.protocol} is not one of s3:, gs:, gdrive:, https:`);
    const connector = this.connectors[type];
    if (!connector.describe) throw new SableError('not_implemented', `${type} items cannot be described`);
    const name = decodeURIComponent(uri.pathname.split('/').filter(Boolean).at(-1) ?? '') || uri.hostname;
    const none = (error: string): PathInfo => ({ source_path: path, source_id: null, name, size: null, content_type: null, modified_at: null, readable: false, error });
    if (type === 'web') return { source_path: path, source_id: null, ...(await connector.describe(this.context(orgId, null, { headers: {} }), uri)) };
    const candidates = this.candidates(orgId, type, uri);
    if (candidates.length === 0) return none(type === 'gdrive' ? 'no gdrive source of this organization can read Drive files' : `no ${type} source of this organization reads bucket ${uri.hostname}`);
    let last: ItemInfo | null = null;
    for (const source of candidates) {
      last = await connector.describe(this.context(orgId, source.id, this.sources.reveal(source)), uri);
      if (last.readable) return { source_path: path, source_id: source.id, ...last };
    }
    return { source_path: path, source_id: candidates.at(-1)!.id, ...last! };
  }

  async batch(orgId: string, paths: string[]): Promise<{ results: PathInfo[] }> {
    if (paths.length > MAX_BATCH) throw badRequest(`source_paths takes at most ${MAX_BATCH} addresses`);
    const results: PathInfo[] = [];
    for (const p of paths) {
      try {
        results.push(await this.info(orgId, p));
      } catch (e) {
        if (!(e instanceof SableError)) throw e;
        results.push({ source_path: p, source_id: null, name: p, size: null, content_type: null, modified_at: null, readable: false, error: e.message });
      }
    }
    return { results };
  }

  /** A Drive file's bytes (Google Docs exported), read with the first gdrive source that can. */
  async streamDrive(orgId: string, fileId: string): Promise<{ stream: Readable; contentType: string; size: number | null; name: string }> {
    const info = await this.info(orgId, `gdrive://${encodeURIComponent(fileId)}`);
    if (!info.readable || !info.source_id) throw new SableError('document_unavailable', info.error ?? `Drive file ${fileId} cannot be read`);
    const source = this.sources.get(info.source_id)!;
    const out = await this.connectors.gdrive.stream!(this.context(orgId, source.id, this.sources.reveal(source)), fileId);
    return { ...out, name: info.name };
  }

  private candidates(orgId: string, type: string, uri: URL): SourceRecord[] {
    return this.sources.ofOrg(orgId).filter((s) => s.type === type && (type === 'gdrive' || (s.config as { bucket?: string }).bucket === uri.hostname));
  }

  private context(orgId: string, sourceId: string | null, config: Record<string, unknown>): ConnectorContext {
    return { orgId, sourceId: sourceId ?? 'preview', config, state: {}, signal: AbortSignal.timeout(30_000) };
  }
}
