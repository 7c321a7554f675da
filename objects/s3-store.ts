/**
 * Uploaded bytes in S3-compatible object storage. Callers PUT straight to the storage with a
 * real SigV4 presigned URL (content type and length signed, so the storage refuses others);
 * the service reads objects back with signed requests, staging each into a local file for the
 * Parquet reader and deleting it after.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { failure, S3CallError, S3Client, text } from '../outbound/s3-client.js';
import { retried, uploadFile, type FileUploadOptions } from '../outbound/s3-multipart.js';
import { objectPath, presign } from '../outbound/sigv4.js';
import { attachmentDisposition, SizeMismatch, type ByteLimit, type ObjectStore, type StagedFile, type UploadTarget } from './object-store.js';

/** S3-compatible object storage for uploaded files (else a directory in the data directory). */
export interface S3Settings {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Key prefix inside the bucket. */
  prefix: string;
}

export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  /** `upload`: part size, threshold and retries of `putFile` (tests shrink them). */
  constructor(private readonly s3: S3Settings, private readonly stagingDir: string, private readonly upload: FileUploadOptions = {}) {
    this.client = new S3Client(s3);
  }

  presignPut(target: UploadTarget): string {
    return presign({
      credentials: this.s3,
      method: 'PUT',
      endpoint: this.s3.endpoint,
      path: this.path(target.key),
      headers: { 'content-type': target.contentType, 'content-length': String(target.sizeBytes) },
      expiresSeconds: Math.max(1, target.expiresAt - Math.floor(Date.now() / 1000)),
    });
  }

  async put(key: string, stream: Readable, size: ByteLimit, contentType: string): Promise<number> {
    // S3 wants the length up front: spool to a local file first, counting (and limiting) bytes.
    const spool = await this.spoolFile();
    try {
      const max = 'exact' in size ? size.exact : size.max;
      let received = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _e, done) {
          received += chunk.length;
          done(received > max ? new SizeMismatch(received, size) : null, chunk);
        },
      });
      await pipeline(stream, counter, createWriteStream(spool));
      if ('exact' in size && received !== size.exact) throw new SizeMismatch(received, size);
      const res = await this.send('PUT', key, { 'content-type': contentType, 'content-length': String(received) }, createReadStream(spool));
      await expectOk(res, `PUT ${key}`);
      return received;
    } finally {
      await rm(spool, { force: true });
    }
  }

  async putFile(key: string, path: string, size: number, contentType: string): Promise<void> {
    const actual = (await stat(path)).size;
    if (actual !== size) throw new SizeMismatch(actual, { exact: size });
    await uploadFile(this.client, this.keyOf(key), path, size, contentType, this.upload);
  }

  async size(key: string): Promise<number | null> {
    const res = await this.send('HEAD', key);
    res.resume();
    if (res.statusCode === 404) return null;
    if (res.statusCode !== 200) throw new S3CallError(`HEAD ${key}: object storage answered ${res.statusCode}`, res.statusCode);
    return Number(res.headers['content-length']);
  }

  /**
   * The object in a local file. The GET is sent again (3 tries in all) when the network fails,
   * object storage answers 5xx or 429, or the body arrives cut: a shard snapshot is many GB.
   */
  async stage(key: string): Promise<StagedFile> {
    const file = await this.spoolFile();
    try {
      await retried(`GET ${key}`, { attempts: 3, backoffMs: 250 }, async () => {
        const res = await this.send('GET', key);
        if (res.statusCode !== 200) await expectOk(res, `GET ${key}`);
        try {
          await pipeline(res, createWriteStream(file));
        } catch (e) {
          throw new S3CallError(`GET ${key}: the body was cut off: ${(e as Error).message}`);
        }
        const expected = Number(res.headers['content-length']);
        if (Number.isFinite(expected) && (await stat(file)).size !== expected) throw new S3CallError(`GET ${key}: the object arrived incomplete`);
      });
    } catch (e) {
      await rm(file, { force: true });
      throw e;
    }
    return { path: file, release: () => rm(file, { force: true }) };
  }

  /** A presigned GET; with `as`, object storage answers it with the name and type of the original (response-* overrides). */
  async download(key: string, expiresSeconds: number, as?: { name: string; contentType: string }): Promise<{ redirect: string } | null> {
    if ((await this.size(key)) === null) return null;
    const query: [string, string][] = as
      ? [
          ['response-content-disposition', attachmentDisposition(as.name)],
          ['response-content-type', as.contentType],
        ]
      : [];
    return {
      redirect: presign({ credentials: this.s3, method: 'GET', endpoint: this.s3.endpoint, path: this.path(key), headers: {}, expiresSeconds, query }),
    };
  }

  async remove(key: string): Promise<void> {
    const res = await this.send('DELETE', key);
    res.resume();
    if (res.statusCode !== 204 && res.statusCode !== 200 && res.statusCode !== 404) throw new S3CallError(`DELETE ${key}: object storage answered ${res.statusCode}`, res.statusCode);
  }

  private path(key: string): string {
    return objectPath(this.s3.bucket, this.keyOf(key));
  }

  private keyOf(key: string): string {
    return this.s3.prefix ? `${this.s3.prefix}/${key}` : key;
  }

  private async spoolFile(): Promise<string> {
    await mkdir(this.stagingDir, { recursive: true });
    return join(this.stagingDir, randomUUID());
  }

  private send(method: string, key: string, headers: Record<string, string> = {}, body?: Readable): Promise<IncomingMessage> {
    return this.client.send(method, this.keyOf(key), { headers, body });
  }
}

async function expectOk(res: IncomingMessage, what: string): Promise<void> {
  if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300) {
    res.resume();
    return;
  }
  throw failure(res.statusCode ?? 0, await text(res), what);
}
