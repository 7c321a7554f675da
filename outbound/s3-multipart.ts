/**
 * Uploads a local file of known size to S3 over `S3Client.send`: one PUT for a small file, a
 * multipart upload (Create, UploadPart, Complete) for a large one, since S3 takes at most
 * 5 GiB in one PUT. Each part is read from the file by byte range (nothing is buffered but the
 * stream's chunks), carries its Content-MD5 (the signer sends UNSIGNED-PAYLOAD, so this is what
 * lets the storage refuse a part damaged on the way), and is retried on its own after a network
 * error, a 5xx or a 429. An upload that fails for good is aborted, so no parts are left billed.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { failure, S3CallError, text, type S3Client } from './s3-client.js';
import { retryAfterMs } from './retry-after.js';

const MiB = 1024 * 1024;
/** S3's floor for every part but the last. */
export const MIN_PART_BYTES = 5 * MiB;
const MAX_PART_BYTES = 5 * 1024 * MiB;
const MAX_PARTS = 10_000;

export interface FileUploadOptions {
  /** Files above this many bytes go up in parts (default 64 MiB); at most 5 GiB. */
  multipartAbove?: number;
  /** Part size (default 64 MiB), grown so that no file needs more than 10,000 parts. */
  partBytes?: number;
  /** Parts in flight at once (default 4). */
  concurrency?: number;
  /** Tries per request, the first included (default 3). */
  attempts?: number;
  /** The first retry's wait; each next one waits four times longer (default 250 ms). */
  backoffMs?: number;
  /**
   * Send each part's (or the whole PUT's) Content-MD5, read from the file before it is sent
   * (default true). It costs a second read and about 1.7 s of CPU per GiB; over TLS, or with an
   * end-to-end checksum of its own, a caller may drop it.
   */
  contentMd5?: boolean;
  signal?: AbortSignal;
}

const DEFAULTS = { multipartAbove: 64 * MiB, partBytes: 64 * MiB, concurrency: 4, attempts: 3, backoffMs: 250, contentMd5: true };

/** Stores `path` (`size` bytes) under `key`: one PUT up to `multipartAbove`, parts above it. */
export async function uploadFile(client: S3Client, key: string, path: string, size: number, contentType: string, options: FileUploadOptions = {}): Promise<void> {
  const o = { ...DEFAULTS, ...options };
  if (size <= Math.min(o.multipartAbove, MAX_PART_BYTES)) await putWhole(client, key, path, size, contentType, o);
  else await multipartUpload(client, key, path, size, contentType, o);
}

/** The part size for a file: the one asked for, at least S3's floor, grown to fit 10,000 parts (whole MiB). */
export function partSizeFor(size: number, wanted = DEFAULTS.partBytes): number {
  const fit = Math.ceil(size / MAX_PARTS / MiB) * MiB;
  const bytes = Math.max(wanted, MIN_PART_BYTES, fit);
  if (bytes > MAX_PART_BYTES) throw new S3CallError(`a file of ${size} bytes exceeds what one S3 object can hold in ${MAX_PARTS} parts of at most 5 GiB`);
  return bytes;
}

type Options = typeof DEFAULTS & { signal?: AbortSignal };

async function putWhole(client: S3Client, key: string, path: string, size: number, contentType: string, o: Options): Promise<void> {
  const md5: Record<string, string> = o.contentMd5 ? { 'content-md5': (await fileMd5(path, 0, size)).toString('base64') } : {};
  await retried(`PUT ${key}`, o, () =>
    withFileRange(path, 0, size, async (body) => {
      const res = await client.send('PUT', key, {
        headers: { 'content-type': contentType, 'content-length': String(size), ...md5 },
        body,
        signal: o.signal,
      });
      await expectOk(res, `PUT ${key}`);
    }),
  );
}

interface Part {
  number: number;
  start: number;
  bytes: number;
  md5?: Buffer;
  etag?: string;
}

async function multipartUpload(client: S3Client, key: string, path: string, size: number, contentType: string, o: Options): Promise<void> {
  const partBytes = partSizeFor(size, o.partBytes);
  const parts: Part[] = [];
  for (let start = 0, n = 1; start < size; start += partBytes, n++) parts.push({ number: n, start, bytes: Math.min(partBytes, size - start) });
  const what = `multipart upload of ${key} (${parts.length} parts of ${partBytes / MiB} MiB)`;

  const uploadId = await retried(`${what}: create`, o, async () => {
    const res = await client.send('POST', key, { query: [['uploads', '']], headers: { 'content-type': contentType }, signal: o.signal });
    const xml = await answer(res, `${what}: create`);
    const id = tag(xml, 'UploadId');
    if (!id) throw new S3CallError(`${what}: the storage answered create without an UploadId`);
    return id;
  });
  const id: [string, string] = ['uploadId', uploadId];

  try {
    // Workers take parts in order; after a part fails for good the others finish what they hold and stop.
    let next = 0;
    let failed: unknown = null;
    const worker = async () => {
      while (failed === null && next < parts.length) {
        const p = parts[next++];
        try {
          if (o.contentMd5) p.md5 = await fileMd5(path, p.start, p.bytes);
          p.etag = await retried(`${what}: part ${p.number}`, o, () =>
            withFileRange(path, p.start, p.bytes, async (body) => {
              const res = await client.send('PUT', key, {
                query: [['partNumber', String(p.number)], id],
                headers: { 'content-length': String(p.bytes), ...(p.md5 ? { 'content-md5': p.md5.toString('base64') } : {}) },
                body,
                signal: o.signal,
              });
              await expectOk(res, `${what}: part ${p.number}`);
              const etag = res.headers.etag;
              if (!etag) throw new S3CallError(`${what}: part ${p.number} was stored without an ETag`);
              return etag;
            }),
          );
        } catch (e) {
          failed ??= e;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, parts.length) }, worker));
    if (failed !== null) throw failed;

    const body = `<CompleteMultipartUpload>${parts.map((p) => `<Part><PartNumber>${p.number}</PartNumber><ETag>${escapeXml(p.etag!)}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
    let tries = 0;
    await retried(`${what}: complete`, o, async () => {
      tries++;
      const res = await client.send('POST', key, { query: [id], headers: { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(body)) }, body: stringBody(body), signal: o.signal });
      const xml = await answer(res, `${what}: complete`).catch(async (e: unknown) => {
        // A retried Complete whose first try was applied (the answer lost on the way) finds no
        // upload any more: the object is there if its ETag is the one these parts make.
        if (tries > 1 && o.contentMd5 && e instanceof S3CallError && e.code === 'NoSuchUpload' && (await storedEtag(client, key, o.signal)) === multipartEtag(parts)) return '';
        throw e;
      });
      // S3 may answer 200 and then report a failure in the body (the answer starts before the parts are joined).
      if (/<Error>/.test(xml)) throw failure(/<Code>(InternalError|SlowDown|ServiceUnavailable)<\/Code>/.test(xml) ? 500 : 400, xml, `${what}: complete`);
    });
  } catch (e) {
    const aborted = await retried(`${what}: abort`, { ...o, signal: undefined }, async () => {
      const res = await client.send('DELETE', key, { query: [id] });
      if (res.statusCode === 404) return void res.resume(); // already gone
      await expectOk(res, `${what}: abort`);
    }).then(
      () => 'the upload was aborted',
      (a: Error) => `aborting upload ${uploadId} failed too (its parts stay until a lifecycle rule removes them): ${a.message}`,
    );
    const cause = e instanceof Error ? e : new Error(String(e));
    throw new S3CallError(`${cause.message}; ${aborted}`, (cause as S3CallError).status, (cause as S3CallError).code);
  }
}

/** Runs `call` up to `attempts` times while it fails with a network error, a 5xx or a 429. */
export async function retried<T>(what: string, o: { attempts: number; backoffMs: number; signal?: AbortSignal }, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (!retryable(e) || o.signal?.aborted || attempt >= o.attempts) {
        const message = e instanceof Error ? e.message : String(e);
        if (attempt > 1) throw new S3CallError(`${what} failed after ${attempt} attempts: ${message}`, (e as S3CallError).status, (e as S3CallError).code);
        throw e instanceof S3CallError && message.startsWith(what) ? e : new S3CallError(`${what}: ${message}`, (e as S3CallError).status, (e as S3CallError).code);
      }
      const asked = (e as RetryableAnswer).retryAfterMs ?? 0;
      const backoff = o.backoffMs * 4 ** (attempt - 1) * (0.75 + Math.random() / 2);
      await sleep(Math.min(Math.max(asked, backoff), 30_000), o.signal);
    }
  }
}

type RetryableAnswer = S3CallError & { retryAfterMs?: number | null };

function retryable(e: unknown): boolean {
  if (!(e instanceof S3CallError)) return false;
  if (e.status !== undefined) return e.status >= 500 || e.status === 429;
  return e.code !== 'BODY'; // no answer: the network (a reset, a refused connection, a timeout)
}

/** Throws unless the answer is 2xx; a body cut mid-way counts as a network error. */
async function expectOk(res: IncomingMessage, what: string): Promise<void> {
  await answer(res, what);
}

async function answer(res: IncomingMessage, what: string): Promise<string> {
  let body: string;
  try {
    body = await text(res);
  } catch (e) {
    throw new S3CallError(`${what}: the answer was cut off: ${(e as Error).message}`);
  }
  const status = res.statusCode ?? 0;
  if (status >= 200 && status < 300) return body;
  const err: RetryableAnswer = failure(status, body, what);
  err.retryAfterMs = retryAfterMs(res.headers['retry-after']);
  throw err;
}

async function storedEtag(client: S3Client, key: string, signal?: AbortSignal): Promise<string | null> {
  const res = await client.send('HEAD', key, { signal });
  res.resume();
  return res.statusCode === 200 ? String(res.headers.etag ?? '').replace(/"/g, '') : null;
}

/** The ETag S3 gives an object made of these parts: the MD5 of their MD5s, then "-" and their count. */
function multipartEtag(parts: Part[]): string {
  const h = createHash('md5');
  for (const p of parts) h.update(p.md5!);
  return `${h.digest('hex')}-${parts.length}`;
}

async function fileMd5(path: string, start: number, bytes: number): Promise<Buffer> {
  const h = createHash('md5');
  if (bytes > 0) for await (const c of createReadStream(path, { start, end: start + bytes - 1 })) h.update(c as Buffer);
  return h.digest();
}

/** Runs `send` with a stream of the byte range, closed after however the try ended (a cut request leaves it open). */
async function withFileRange<T>(path: string, start: number, bytes: number, send: (body: Readable | undefined) => Promise<T>): Promise<T> {
  const body = bytes > 0 ? createReadStream(path, { start, end: start + bytes - 1 }) : undefined;
  try {
    return await send(body);
  } finally {
    body?.destroy();
  }
}

function stringBody(s: string): Readable {
  return Readable.from([Buffer.from(s)]);
}

function tag(xml: string, name: string): string | null {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m ? m[1] : null;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); // an ETag's quotes stay as they are
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });
}
