/**
 * Amazon S3 and S3-compatible buckets (MinIO, R2, Ceph: `endpoint`): objects under `prefix`
 * that match `file_patterns`, listed with ListObjectsV2 and read with signed GETs. An object's
 * ETag is its version, so an incremental run skips unchanged objects without reading them.
 * Objects over `max_file_size_mb` are skipped, as the contract says.
 */
import { checkLiteralHost, guardedLookup } from '../../outbound/address-guard.js';
import { failure, S3Client, text } from '../../outbound/s3-client.js';
import type { StagedFile } from '../../objects/object-store.js';
import type { Connector, ConnectorContext, ItemInfo, ItemRef, SourceItem, Validation } from './connector.js';
import { belowPrefix, globMatcher } from './globs.js';
import { mediaTypeOf } from './media-types.js';
import { stageStream } from './staging.js';

interface S3Config {
  bucket: string;
  access_key_id: string;
  secret_access_key: string;
  prefix?: string;
  region: string;
  endpoint?: string;
  file_patterns: string[];
  max_file_size_mb: number;
}

const MB = 1024 * 1024;

export class S3Connector implements Connector {
  readonly type = 's3' as const;
  readonly retainsOriginals = false;
  readonly oversize = 'skip' as const;

  constructor(
    private readonly stagingDir: string,
    private readonly allowPrivateNetwork: boolean,
  ) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    const c = ctx.config as unknown as S3Config;
    const client = this.client(c);
    const wanted = globMatcher(c.file_patterns);
    let token: string | null = null;
    do {
      const page = await client.list(c.prefix ?? '', token, 1000, ctx.signal);
      for (const o of page.objects) {
        if (o.key.endsWith('/') || !wanted(belowPrefix(o.key, c.prefix))) continue;
        const name = o.key.slice(o.key.lastIndexOf('/') + 1);
        yield { id: o.key, name, path: o.key, url: `s3://${c.bucket}/${o.key}`, contentType: mediaTypeOf(name), size: o.size, version: o.etag || null };
      }
      token = page.next;
    } while (token);
  }

  async fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    const c = ctx.config as unknown as S3Config;
    const key = item.item?.id ?? item.file_path;
    const res = await this.client(c).send('GET', key, { signal: ctx.signal });
    if (res.statusCode !== 200) throw failure(res.statusCode ?? 0, await text(res), `reading s3://${c.bucket}/${key}`);
    return stageStream(res, this.stagingDir, this.maxBytes(c as unknown as Record<string, unknown>), ctx.signal);
  }

  async validate(ctx: ConnectorContext): Promise<Validation> {
    const c = ctx.config as unknown as S3Config;
    const page = await this.client(c).list(c.prefix ?? '', null, 1000, ctx.signal);
    const wanted = globMatcher(c.file_patterns);
    const matching = page.objects.filter((o) => !o.key.endsWith('/') && wanted(belowPrefix(o.key, c.prefix)));
    const warnings: string[] = [];
    if (page.objects.length === 0) warnings.push(`no objects under ${c.prefix ? `prefix ${c.prefix}` : 'the bucket'}`);
    else if (matching.length === 0) warnings.push(`none of the first ${page.objects.length} objects match file_patterns ${c.file_patterns.join(', ')}`);
    const big = matching.filter((o) => o.size > c.max_file_size_mb * MB).length;
    if (big > 0) warnings.push(`${big} matching object(s) are over max_file_size_mb (${c.max_file_size_mb}) and will be skipped`);
    return { samples: matching.slice(0, 5).map((o) => ({ title: o.key, url: `s3://${c.bucket}/${o.key}` })), warnings };
  }

  async describe(ctx: ConnectorContext, uri: URL): Promise<ItemInfo> {
    const c = ctx.config as unknown as S3Config;
    const key = decodeURIComponent(uri.pathname.replace(/^\//, ''));
    const name = key.slice(key.lastIndexOf('/') + 1);
    const res = await this.client(c).send('HEAD', key, { signal: ctx.signal });
    res.resume();
    if (res.statusCode !== 200) return { name, size: null, content_type: null, modified_at: null, readable: false, error: `the bucket answered ${res.statusCode} for ${key}` };
    const modified = res.headers['last-modified'];
    return { name, size: Number(res.headers['content-length'] ?? 0), content_type: String(res.headers['content-type'] ?? mediaTypeOf(name)), modified_at: modified ? new Date(modified).toISOString() : null, readable: true };
  }

  maxBytes(config: Record<string, unknown>): number {
    return (config.max_file_size_mb as number) * MB;
  }

  private client(c: S3Config): S3Client {
    const endpoint = (c.endpoint ?? `https://s3.${c.region}.amazonaws.com`).replace(/\/+$/, '');
    checkLiteralHost(new URL(endpoint), this.allowPrivateNetwork);
    return new S3Client(
      { endpoint, bucket: c.bucket, region: c.region, accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
      { lookup: guardedLookup(this.allowPrivateNetwork) },
    );
  }
}
