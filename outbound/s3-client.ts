/**
 * The few S3 calls the service makes (path-style URLs, SigV4 headers): send one request,
 * list a bucket's objects page by page (ListObjectsV2), and read answers' XML errors. Used by
 * the object store for uploads and by the s3 source connector; the caller decides what a
 * status means. `lookup` lets a caller refuse private addresses (address-guard.ts).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { objectPath, signHeaders, uriEncode, type S3Credentials } from './sigv4.js';

export interface S3Target extends S3Credentials {
  endpoint: string;
  bucket: string;
}

export interface S3Object {
  key: string;
  size: number;
  etag: string;
  lastModified: string;
}

export class S3CallError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface S3ClientOptions {
  timeoutMs?: number;
  lookup?: LookupFunction;
}

export class S3Client {
  private readonly timeoutMs: number;

  constructor(
    private readonly target: S3Target,
    private readonly opts: S3ClientOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  /** One signed request for an object key (or the bucket itself with key ''). */
  send(method: string, key: string, o: { headers?: Record<string, string>; query?: [string, string][]; body?: Readable; signal?: AbortSignal } = {}): Promise<IncomingMessage> {
    const t = this.target;
    const path = key === '' ? `/${uriEncode(t.bucket)}` : objectPath(t.bucket, key);
    const signed = signHeaders({ credentials: t, method, endpoint: t.endpoint, path, query: o.query, headers: o.headers });
    const url = new URL(path, t.endpoint);
    url.search = (o.query ?? []).map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`).join('&');
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const what = `${method} ${key || t.bucket}`;
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers: signed, timeout: this.timeoutMs, signal: o.signal, ...(this.opts.lookup ? { lookup: this.opts.lookup } : {}) }, resolve);
      req.on('timeout', () => req.destroy(new S3CallError(`${what}: ${t.endpoint} did not answer in ${Math.round(this.timeoutMs / 1000)} s`)));
      req.on('error', (e) => reject(e instanceof S3CallError ? e : new S3CallError(`${what}: cannot reach ${t.endpoint}: ${e.message}`, undefined, (e as NodeJS.ErrnoException).code)));
      if (o.body) {
        // A body that fails to read (a file gone, say) ends the request instead of leaving it waiting.
        o.body.once('error', (e) => req.destroy(new S3CallError(`${what}: reading the body failed: ${e.message}`, undefined, 'BODY')));
        o.body.pipe(req);
      } else req.end();
    });
  }

  /** One page of the objects under `prefix` (up to `maxKeys`), and the token of the next page. */
  async list(prefix: string, continuation: string | null, maxKeys = 1000, signal?: AbortSignal): Promise<{ objects: S3Object[]; next: string | null }> {
    const query: [string, string][] = [['list-type', '2'], ['max-keys', String(maxKeys)]];
    if (prefix) query.push(['prefix', prefix]);
    if (continuation) query.push(['continuation-token', continuation]);
    const res = await this.send('GET', '', { query, signal });
    const xml = await text(res);
    if (res.statusCode !== 200) throw failure(res.statusCode ?? 0, xml, `listing bucket ${this.target.bucket}`);
    const objects = [...xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)].map(([, c]) => ({
      key: unescapeXml(tag(c, 'Key') ?? ''),
      size: Number(tag(c, 'Size') ?? 0),
      etag: unescapeXml(tag(c, 'ETag') ?? '').replace(/"/g, ''),
      lastModified: tag(c, 'LastModified') ?? '',
    }));
    const truncated = tag(xml, 'IsTruncated') === 'true';
    return { objects, next: truncated ? unescapeXml(tag(xml, 'NextContinuationToken') ?? '') || null : null };
  }
}

/** An S3 error answer as a sentence: its code and message, and what the status usually means. */
export function failure(status: number, body: string, what: string): S3CallError {
  const code = tag(body, 'Code') ?? undefined;
  const message = tag(body, 'Message');
  const hint =
    status === 403 ? ': access denied (check the access key, the secret and the bucket policy)'
    : code === 'NoSuchBucket' ? ': no such bucket'
    : status === 301 || code === 'PermanentRedirect' ? ': the bucket is in another region'
    : '';
  return new S3CallError(`${what}: S3 answered ${status}${code ? ` ${code}` : ''}${hint}${message && !hint ? ` (${message})` : ''}`, status, code);
}

export async function text(res: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of res) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function tag(xml: string, name: string): string | null {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m ? m[1] : null;
}

function unescapeXml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e.toLowerCase()]!;
  });
}
