/**
 * AWS Signature Version 4 for S3-compatible storage (path-style URLs): presigned URLs (query
 * string auth) and signed request headers. The payload is never hashed (UNSIGNED-PAYLOAD),
 * so multi-gigabyte bodies stream.
 */
import { createHash, createHmac } from 'node:crypto';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const UNSIGNED = 'UNSIGNED-PAYLOAD';

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ is escaped. */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The path of an object URL: each segment of bucket/key encoded, slashes kept. */
export function objectPath(bucket: string, key: string): string {
  return `/${uriEncode(bucket)}/${key.split('/').map(uriEncode).join('/')}`;
}

function amzDate(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');

function signature(c: S3Credentials, date: string, stringToSign: string): string {
  const day = date.slice(0, 8);
  const key = hmac(hmac(hmac(hmac(`AWS4${c.secretAccessKey}`, day), c.region), 's3'), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

function canonical(method: string, path: string, query: [string, string][], headers: Record<string, string>): { request: string; signed: string } {
  const q = query
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = Object.keys(headers).map((h) => h.toLowerCase()).sort();
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, ' ')]));
  const canonicalHeaders = names.map((h) => `${h}:${lower[h]}\n`).join('');
  const signed = names.join(';');
  return { request: [method, path, q, canonicalHeaders, signed, UNSIGNED].join('\n'), signed };
}

/**
 * A presigned URL. `headers` are signed too (e.g. content-type, content-length): a request
 * with other values for them fails the signature check.
 */
export function presign(o: {
  credentials: S3Credentials;
  method: string;
  endpoint: string;
  path: string;
  headers: Record<string, string>;
  expiresSeconds: number;
  now?: Date;
  /** More query parameters, signed with the rest (e.g. a GET's response-content-disposition). */
  query?: [string, string][];
}): string {
  const url = new URL(o.endpoint);
  const date = amzDate(o.now ?? new Date());
  const scope = `${date.slice(0, 8)}/${o.credentials.region}/s3/aws4_request`;
  const headers = { ...o.headers, host: url.host };
  const names = Object.keys(headers).map((h) => h.toLowerCase()).sort().join(';');
  const query: [string, string][] = [
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Credential', `${o.credentials.accessKeyId}/${scope}`],
    ['X-Amz-Date', date],
    ['X-Amz-Expires', String(o.expiresSeconds)],
    ['X-Amz-SignedHeaders', names],
    ...(o.query ?? []),
  ];
  const { request } = canonical(o.method, o.path, query, headers);
  const sig = signature(o.credentials, date, [ALGORITHM, date, scope, sha256(request)].join('\n'));
  const qs = [...query, ['X-Amz-Signature', sig]].map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`).join('&');
  return `${url.origin}${o.path}?${qs}`;
}

/** Headers (Authorization and the x-amz ones) for a request signed with SigV4. */
export function signHeaders(o: {
  credentials: S3Credentials;
  method: string;
  endpoint: string;
  path: string;
  query?: [string, string][];
  headers?: Record<string, string>;
  now?: Date;
}): Record<string, string> {
  const url = new URL(o.endpoint);
  const date = amzDate(o.now ?? new Date());
  const scope = `${date.slice(0, 8)}/${o.credentials.region}/s3/aws4_request`;
  const headers: Record<string, string> = { ...(o.headers ?? {}), host: url.host, 'x-amz-content-sha256': UNSIGNED, 'x-amz-date': date };
  const { request, signed } = canonical(o.method, o.path, o.query ?? [], headers);
  const sig = signature(o.credentials, date, [ALGORITHM, date, scope, sha256(request)].join('\n'));
  return { ...headers, authorization: `${ALGORITHM} Credential=${o.credentials.accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${sig}` };
}
