/**
 * One S3 client in a process of its own (bench/s3/run.ts forks one per client), so each has its
 * own resident set: the peak (VmHWM) is read per phase after clearing it (`5` to
 * /proc/self/clear_refs). Commands come over IPC; every time is taken here, around the client
 * call alone.
 *
 *   hand: outbound/s3-client.ts (SigV4 headers, UNSIGNED-PAYLOAD, one request per object;
 *         no multipart, no retries, no checksums)
 *   sdk:  @aws-sdk/client-s3 (PutObject / GetObject) and @aws-sdk/lib-storage's Upload for
 *         multipart, configured for S3-compatible endpoints as ../shared/libraries.md says
 *         (forcePathStyle, request/response checksums WHEN_REQUIRED)
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { failure, text } from '../../outbound/s3-client.js';

export type ClientName = 'hand' | 'sdk';

/** Where a PUT's body comes from: a buffer in memory (small objects) or a file (snapshots). */
export type Source = { kind: 'buffer'; size: number } | { kind: 'file'; path: string; size: number };

export type Command =
  | { op: 'put'; key: string; source: Source; multipart?: { partSize: number; queueSize: number } }
  | { op: 'get'; key: string; size: number; md5?: boolean }
  | { op: 'reset-peak' }
  | { op: 'peak' }
  | { op: 'exit' };

export interface OpResult {
  ms: number;
  bytes: number;
  etag?: string;
  /** Process CPU (user + system) the call took, in ms. */
  cpuMs: number;
}

const [name, endpoint, bucket, accessKeyId, secretAccessKey] = process.argv.slice(2) as [ClientName, string, string, string, string];
const region = 'us-east-1';

// Each process loads only its own client (the SDK's modules would weigh on the other's RSS).
const { S3Client: HandClient } = await import('../../outbound/s3-client.js');
const hand = name === 'hand' ? new HandClient({ endpoint, bucket, region, accessKeyId, secretAccessKey }, { timeoutMs: 300_000 }) : null!;
const aws = name === 'sdk' ? await import('@aws-sdk/client-s3') : null!;
const storage = name === 'sdk' ? await import('@aws-sdk/lib-storage') : null!;
const sdk =
  name === 'sdk'
    ? new aws.S3Client({
        endpoint,
        region,
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
        // ../shared/libraries.md: without these a streamed body is stored with its aws-chunked
        // framing by S3-compatible servers.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      })
    : null!;

const buffers = new Map<number, Buffer>();
function bufferOf(size: number): Buffer {
  let b = buffers.get(size);
  if (!b) {
    b = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4) b.writeUInt32LE((i * 2654435761) >>> 0, i);
    buffers.set(size, b);
  }
  return b;
}

async function drain(body: AsyncIterable<Uint8Array>, hash?: Hash): Promise<number> {
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    hash?.update(chunk);
  }
  return n;
}

async function put(c: Extract<Command, { op: 'put' }>): Promise<{ bytes: number; etag?: string }> {
  const { key, source } = c;
  const body = () => (source.kind === 'file' ? createReadStream(source.path, { highWaterMark: 1 << 20 }) : Readable.from([bufferOf(source.size)]));
  if (name === 'hand') {
    if (c.multipart) throw new Error('the hand-written client has no multipart upload');
    const res = await hand.send('PUT', key, { headers: { 'content-length': String(source.size), 'content-type': 'application/octet-stream' }, body: body() });
    if (res.statusCode !== 200) throw failure(res.statusCode ?? 0, await text(res), `PUT ${key}`);
    res.resume();
    return { bytes: source.size, etag: String(res.headers.etag ?? '').replace(/"/g, '') };
  }
  if (c.multipart) {
    const up = new storage.Upload({
      client: sdk,
      params: { Bucket: bucket, Key: key, Body: body(), ContentType: 'application/octet-stream' },
      partSize: c.multipart.partSize,
      queueSize: c.multipart.queueSize,
      leavePartsOnError: false,
    });
    const r = await up.done();
    return { bytes: source.size, etag: String(r.ETag ?? '').replace(/"/g, '') };
  }
  const r = await sdk.send(
    new aws.PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: source.kind === 'file' ? body() : bufferOf(source.size),
      ContentLength: source.size,
      ContentType: 'application/octet-stream',
    }),
  );
  return { bytes: source.size, etag: String(r.ETag ?? '').replace(/"/g, '') };
}

/** A GET drained; with `md5`, the body's MD5 as `etag` (an untimed check, not a measured call). */
async function get(c: Extract<Command, { op: 'get' }>): Promise<{ bytes: number; etag?: string }> {
  const hash = c.md5 ? createHash('md5') : undefined;
  let bytes: number;
  if (name === 'hand') {
    const res: IncomingMessage = await hand.send('GET', c.key);
    if (res.statusCode !== 200) throw failure(res.statusCode ?? 0, await text(res), `GET ${c.key}`);
    bytes = await drain(res, hash);
  } else {
    const r = await sdk.send(new aws.GetObjectCommand({ Bucket: bucket, Key: c.key }));
    bytes = await drain(r.Body as unknown as AsyncIterable<Uint8Array>, hash);
  }
  return hash ? { bytes, etag: hash.digest('hex') } : { bytes };
}

function peakKiB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

async function timed(fn: () => Promise<{ bytes: number; etag?: string }>): Promise<OpResult> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await fn();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, ...r };
}

process.on('message', (cmd: Command) => {
  void (async () => {
    try {
      if (cmd.op === 'exit') {
        sdk?.destroy();
        process.disconnect();
        return;
      }
      if (cmd.op === 'reset-peak') {
        // Clears VmHWM to the current RSS (Linux >= 4.0), after a GC so garbage of the last phase goes.
        (globalThis as { gc?: () => void }).gc?.();
        writeFileSync('/proc/self/clear_refs', '5');
        process.send!({ ok: true, rssKiB: Math.round(process.memoryUsage.rss() / 1024) });
        return;
      }
      if (cmd.op === 'peak') {
        process.send!({ ok: true, peakKiB: peakKiB() });
        return;
      }
      const r = cmd.op === 'put' ? await timed(() => put(cmd)) : await timed(() => get(cmd));
      if (cmd.op === 'get' && r.bytes !== cmd.size) throw new Error(`GET ${cmd.key}: ${r.bytes} bytes, expected ${cmd.size}`);
      process.send!({ ok: true, ...r });
    } catch (e) {
      process.send!({ ok: false, error: (e as Error).stack ?? String(e) });
    }
  })();
});
(globalThis as { gc?: () => void }).gc?.();
process.send!({ ok: true, ready: name, rssKiB: Math.round(process.memoryUsage.rss() / 1024) });
