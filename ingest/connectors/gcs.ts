/**
 * Google Cloud Storage buckets (@google-cloud/storage, the JSON API at the deployment's
 * `SABLE_GCS_API_URL`): objects under `prefix` that match `file_patterns`, an object's md5Hash
 * (else its generation) its version, so an unchanged object is not read again. Credentials by
 * `auth_mode`: a service account key, OAuth credentials, a connection, or the deployment's
 * application default credentials (google-auth.ts).
 */
import { Storage } from '@google-cloud/storage';
import type { StagedFile } from '../../objects/object-store.js';
import type { Connector, ConnectorContext, ItemInfo, ItemRef, SourceItem, Validation } from './connector.js';
import { belowPrefix, globMatcher } from './globs.js';
import type { GoogleAuthConfig, GoogleTokens } from './google-auth.js';
import { mediaTypeOf } from './media-types.js';
import { stageStream } from './staging.js';

interface GcsConfig extends GoogleAuthConfig {
  bucket: string;
  prefix?: string;
  project_id?: string;
  file_patterns: string[];
}

const SCOPES = ['https://www.googleapis.com/auth/devstorage.read_only'];
const MAX_BYTES = 100 * 1024 * 1024;

export class GcsConnector implements Connector {
  readonly type = 'gcs' as const;
  readonly retainsOriginals = false;

  constructor(
    private readonly stagingDir: string,
    private readonly apiUrl: string,
    private readonly google: GoogleTokens,
  ) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    const c = ctx.config as unknown as GcsConfig;
    const bucket = (await this.storage(ctx, true)).bucket(c.bucket);
    const wanted = globMatcher(c.file_patterns);
    let query: { prefix?: string; pageToken?: string; maxResults: number; autoPaginate: false } | null = { prefix: c.prefix || undefined, maxResults: 1000, autoPaginate: false };
    while (query) {
      const [files, next] = await this.call(() => bucket.getFiles(query!), `listing gs://${c.bucket}`);
      for (const f of files) {
        const name = f.name;
        if (name.endsWith('/') || !wanted(belowPrefix(name, c.prefix))) continue;
        const m = f.metadata;
        const short = name.slice(name.lastIndexOf('/') + 1);
        yield {
          id: name,
          name: short,
          path: name,
          url: `gs://${c.bucket}/${name}`,
          contentType: m.contentType && m.contentType !== 'application/octet-stream' ? String(m.contentType) : mediaTypeOf(short),
          size: m.size !== undefined ? Number(m.size) : null,
          version: m.md5Hash ? `md5:${m.md5Hash}` : m.generation !== undefined ? `generation:${m.generation}` : null,
        };
      }
      query = (next as typeof query) ?? null;
    }
  }

  async fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    const c = ctx.config as unknown as GcsConfig;
    const file = (await this.storage(ctx)).bucket(c.bucket).file(item.item?.id ?? item.file_path);
    return stageStream(file.createReadStream({ validation: false }), this.stagingDir, MAX_BYTES, ctx.signal);
  }

  async validate(ctx: ConnectorContext): Promise<Validation> {
    const c = ctx.config as unknown as GcsConfig;
    const [files] = await this.call(async () => (await this.storage(ctx)).bucket(c.bucket).getFiles({ prefix: c.prefix || undefined, maxResults: 1000, autoPaginate: false }), `listing gs://${c.bucket}`);
    const wanted = globMatcher(c.file_patterns);
    const matching = files.filter((f) => !f.name.endsWith('/') && wanted(belowPrefix(f.name, c.prefix)));
    const warnings: string[] = [];
    if (files.length === 0) warnings.push(`no objects under ${c.prefix ? `prefix ${c.prefix}` : 'the bucket'}`);
    else if (matching.length === 0) warnings.push(`none of the first ${files.length} objects match file_patterns ${c.file_patterns.join(', ')}`);
    return { samples: matching.slice(0, 5).map((f) => ({ title: f.name, url: `gs://${c.bucket}/${f.name}` })), warnings };
  }

  async describe(ctx: ConnectorContext, uri: URL): Promise<ItemInfo> {
    const c = ctx.config as unknown as GcsConfig;
    const name = decodeURIComponent(uri.pathname.replace(/^\//, ''));
    const short = name.slice(name.lastIndexOf('/') + 1);
    try {
      const [m] = await this.call(async () => (await this.storage(ctx)).bucket(c.bucket).file(name).getMetadata(), `reading gs://${c.bucket}/${name}`);
      return { name: short, size: m.size !== undefined ? Number(m.size) : null, content_type: m.contentType ? String(m.contentType) : mediaTypeOf(short), modified_at: m.updated ? String(m.updated) : null, readable: true };
    } catch (e) {
      return { name: short, size: null, content_type: null, modified_at: null, readable: false, error: (e as Error).message };
    }
  }

  maxBytes(): number {
    return MAX_BYTES;
  }

  private async storage(ctx: ConnectorContext, fresh = false): Promise<Storage> {
    const c = ctx.config as unknown as GcsConfig;
    const authClient = await this.google.client(ctx, c, SCOPES, fresh);
    // A custom endpoint (a private Google API gateway, a test peer) gets the credentials too.
    return new Storage({ apiEndpoint: this.apiUrl, useAuthWithCustomEndpoint: true, projectId: c.project_id ?? 'sable', authClient, retryOptions: { autoRetry: true, maxRetries: 3 } });
  }

  private async call<T>(fn: () => Promise<T>, what: string): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      const code = (e as { code?: number }).code;
      if (code === 401) throw new Error(`Google Cloud Storage refused the credentials while ${what} (401)`);
      if (code === 403) throw new Error(`the credentials may not read the bucket while ${what} (403): grant the service account Storage Object Viewer`);
      if (code === 404) throw new Error(`no such bucket while ${what} (404)`);
      throw new Error(`Google Cloud Storage failed while ${what}: ${(e as Error).message}`);
    }
  }
}
