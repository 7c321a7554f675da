// ObjectStore.putFile against the real local S3 server (s3rver, signatures checked): a file above
// the threshold goes up as a multipart upload (5 MiB parts here), a part whose connection is cut
// is retried on its own, a failure that persists aborts the upload (no upload left behind), and
// a small file goes up in one PUT, retried whole. Connections run through a TCP front
// (testkit/cut-proxy.ts) that notes every request line and cuts the requests it is told to.
import { createHash, randomFillSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SizeMismatch } from '../../dist/objects/object-store.js';
import { LocalObjectStore } from '../../dist/objects/local-store.js';
import { S3ObjectStore, type S3Settings } from '../../dist/objects/s3-store.js';
import { UploadSigner } from '../../dist/objects/signer.js';
import { S3CallError, S3Client, text } from '../../dist/outbound/s3-client.js';
import { partSizeFor, uploadFile } from '../../dist/outbound/s3-multipart.js';
import { CutProxy } from '../../testkit/cut-proxy.js';
import { startS3, S3_KEY, S3_SECRET, type LocalS3 } from '../../testkit/s3.js';

const MiB = 1024 * 1024;
const BUCKET = 'snaps';
const BIG = 20 * MiB - 1000; // 4 parts of 5 MiB, the last one short

describe('putFile: multipart uploads with per-part retries', () => {
  let s3: LocalS3;
  let proxy: CutProxy;
  let dir: string;
  let viaProxy: S3ObjectStore;
  let direct: S3ObjectStore;
  let client: S3Client;
  let big: string;
  let small: string;

  const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
  const storedSha = async (key: string) => {
    const staged = await direct.stage(key);
    try {
      return sha256(staged.path);
    } finally {
      await staged.release();
    }
  };
  const randomFile = (name: string, bytes: number) => {
    const path = join(dir, name);
    writeFileSync(path, randomFillSync(Buffer.alloc(bytes)));
    return path;
  };
  /** The request lines the front passed for an object key, from `from` on. */
  const requestsFor = (key: string, from: number) => proxy.requests.slice(from).filter((r) => r.split(' ')[1].split('?')[0] === `/${BUCKET}/cluster/${key}`);
  /** ListMultipartUploads: the upload IDs still open in the bucket. */
  const openUploads = async () => {
    const res = await client.send('GET', '', { query: [['uploads', '']] });
    const xml = await text(res);
    expect(res.statusCode, xml).toBe(200);
    return [...xml.matchAll(/<UploadId>([^<]*)<\/UploadId>/g)].map((m) => m[1]);
  };

  beforeAll(async () => {
    s3 = await startS3(BUCKET);
    proxy = new CutProxy(new URL(s3.endpoint));
    const front = await proxy.start();
    dir = mkdtempSync(join(tmpdir(), 'sable-multipart-'));
    const settings: S3Settings = { endpoint: s3.endpoint, bucket: BUCKET, region: 'us-east-1', accessKeyId: S3_KEY, secretAccessKey: S3_SECRET, prefix: 'cluster' };
    viaProxy = new S3ObjectStore({ ...settings, endpoint: front }, join(dir, 'staging'), { partBytes: 5 * MiB, multipartAbove: 5 * MiB, backoffMs: 20 });
    direct = new S3ObjectStore(settings, join(dir, 'staging'));
    client = new S3Client(settings);
    big = randomFile('big', BIG);
    small = randomFile('small', MiB + 7);
  });
  afterAll(async () => {
    await proxy?.stop();
    await s3?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('uploads a file in 4 parts and reads back the same bytes', async () => {
    const from = proxy.requests.length;
    await viaProxy.putFile('snap/whole', big, BIG, 'application/octet-stream');
    const calls = requestsFor('snap/whole', from);
    expect(calls.filter((r) => r.startsWith('POST') && r.endsWith('?uploads='))).toHaveLength(1);
    expect(calls.filter((r) => r.startsWith('PUT')).map((r) => /partNumber=(\d+)/.exec(r)?.[1]).sort()).toEqual(['1', '2', '3', '4']);
    expect(calls.filter((r) => /^POST \S+\?uploadId=/.test(r))).toHaveLength(1);
    expect(await direct.size('snap/whole')).toBe(BIG);
    expect(await storedSha('snap/whole')).toBe(sha256(big));
    expect(await openUploads()).toEqual([]);
  });

  it('uploads without Content-MD5 when asked (a caller with its own end-to-end checksum)', async () => {
    await uploadFile(client, 'cluster/snap/no-md5', big, BIG, 'application/octet-stream', { partBytes: 5 * MiB, multipartAbove: 5 * MiB, contentMd5: false });
    expect(await storedSha('snap/no-md5')).toBe(sha256(big));
  });

  it('retries a part whose connection is cut, and the object is still right', async () => {
    const from = proxy.requests.length;
    const cuts = proxy.cuts;
    proxy.cutRequests(/^PUT \S+\/snap\/cut\?partNumber=2&/, 1, MiB); // after 1 MiB of part 2 has reached the server
    await viaProxy.putFile('snap/cut', big, BIG, 'application/octet-stream');
    expect(proxy.cuts - cuts).toBe(1);
    const tries = requestsFor('snap/cut', from).filter((r) => r.startsWith('PUT')).map((r) => /partNumber=(\d+)/.exec(r)?.[1]);
    expect(tries.sort()).toEqual(['1', '2', '2', '3', '4']);
    expect(await storedSha('snap/cut')).toBe(sha256(big));
    expect(await openUploads()).toEqual([]);
  });

  it('aborts the upload when parts keep failing: nothing left behind, a clear S3CallError', async () => {
    const from = proxy.requests.length;
    proxy.cutRequests(/^PUT \S+\/snap\/lost\?partNumber=/, Number.POSITIVE_INFINITY); // every part, every try
    try {
      const err = await viaProxy.putFile('snap/lost', big, BIG, 'application/octet-stream').then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(S3CallError);
      expect((err as Error).message).toMatch(/^multipart upload of cluster\/snap\/lost \(4 parts of 5 MiB\): part \d failed after 3 attempts: PUT cluster\/snap\/lost: cannot reach .*; the upload was aborted$/);
    } finally {
      proxy.disarm();
    }
    const calls = requestsFor('snap/lost', from);
    expect(calls.filter((r) => r.startsWith('PUT')).length).toBe(4 * 3); // 4 workers, each one part tried 3 times
    expect(calls.filter((r) => /^DELETE \S+\?uploadId=/.test(r))).toHaveLength(1);
    expect(await openUploads()).toEqual([]);
    // The peer answers these two calls itself, after s3rver's own signature check.
    const stranger = new S3Client({ endpoint: s3.endpoint, bucket: BUCKET, region: 'us-east-1', accessKeyId: S3_KEY, secretAccessKey: 'not-the-secret' });
    for (const [method, key, query] of [['GET', '', [['uploads', '']]], ['DELETE', 'cluster/snap/lost', [['uploadId', '0123456789abcdef']]]] as const) {
      const res = await stranger.send(method, key, { query: query.map(([k, v]) => [k, v] as [string, string]) });
      res.resume();
      expect(res.statusCode).toBe(403);
    }
    const uploadsDir = join(s3.directory, BUCKET, '._S3rver_uploads');
    expect(existsSync(uploadsDir) ? readdirSync(uploadsDir) : []).toEqual([]);
    expect(await direct.size('snap/lost')).toBeNull();
  });

  it('retries a part answered 503 SlowDown; a 403 fails at once and aborts the upload', async () => {
    let from = proxy.requests.length;
    proxy.answerRequests(/^PUT \S+\/snap\/slow\?partNumber=3&/, 503);
    await viaProxy.putFile('snap/slow', big, BIG, 'application/octet-stream');
    const tries = requestsFor('snap/slow', from).filter((r) => r.startsWith('PUT')).map((r) => /partNumber=(\d+)/.exec(r)?.[1]);
    expect(tries.sort()).toEqual(['1', '2', '3', '3', '4']);
    expect(await storedSha('snap/slow')).toBe(sha256(big));

    from = proxy.requests.length;
    proxy.answerRequests(/^PUT \S+\/snap\/denied\?partNumber=1&/, 403);
    const err = await viaProxy.putFile('snap/denied', big, BIG, 'application/octet-stream').then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(S3CallError);
    expect((err as S3CallError).status).toBe(403);
    expect((err as Error).message).toMatch(/part 1: S3 answered 403 AccessDenied: access denied .*; the upload was aborted$/);
    const calls = requestsFor('snap/denied', from);
    expect(calls.filter((r) => /partNumber=1&/.test(r))).toHaveLength(1); // not retried
    expect(calls.filter((r) => r.startsWith('DELETE'))).toHaveLength(1);
    expect(await openUploads()).toEqual([]);
    expect(await direct.size('snap/denied')).toBeNull();
  });

  it('sends a small file in one PUT, and retries that PUT whole when its connection is cut', async () => {
    let from = proxy.requests.length;
    await viaProxy.putFile('snap/small', small, MiB + 7, 'application/octet-stream');
    expect(requestsFor('snap/small', from)).toEqual([`PUT /${BUCKET}/cluster/snap/small`]);
    expect(await storedSha('snap/small')).toBe(sha256(small));

    from = proxy.requests.length;
    proxy.cutRequests(/^PUT \S+\/snap\/small-cut$/, 1, 256 * 1024);
    await viaProxy.putFile('snap/small-cut', small, MiB + 7, 'application/octet-stream');
    expect(requestsFor('snap/small-cut', from)).toEqual([`PUT /${BUCKET}/cluster/snap/small-cut`, `PUT /${BUCKET}/cluster/snap/small-cut`]);
    expect(await storedSha('snap/small-cut')).toBe(sha256(small));
  });

  it('stages (GET) an object again when its connection is cut or object storage answers 503, and not on a 404', async () => {
    await direct.putFile('snap/read-back', small, MiB + 7, 'application/octet-stream');
    let from = proxy.requests.length;
    proxy.cutRequests(/^GET \S+\/snap\/read-back$/, 1);
    proxy.answerRequests(/^GET \S+\/snap\/read-back$/, 503);
    const staged = await viaProxy.stage('snap/read-back');
    try {
      expect(sha256(staged.path)).toBe(sha256(small));
    } finally {
      await staged.release();
    }
    expect(requestsFor('snap/read-back', from).length).toBe(3);
    from = proxy.requests.length;
    await expect(viaProxy.stage('snap/none')).rejects.toMatchObject({ status: 404 });
    expect(requestsFor('snap/none', from).length).toBe(1);
  });

  it('refuses a file that is not the size declared, storing nothing', async () => {
    await expect(viaProxy.putFile('snap/short', small, MiB + 8, 'application/octet-stream')).rejects.toBeInstanceOf(SizeMismatch);
    expect(await direct.size('snap/short')).toBeNull();
  });

  it('grows the part size so that no file needs more than 10,000 parts, and refuses what S3 cannot hold', () => {
    expect(partSizeFor(96e9)).toBe(64 * MiB); // 1,431 parts
    expect(partSizeFor(1e12)).toBe(96 * MiB); // 9,934 parts
    expect(Math.ceil(1e12 / partSizeFor(1e12))).toBeLessThanOrEqual(10_000);
    expect(partSizeFor(20 * MiB, MiB)).toBe(5 * MiB); // S3's floor
    expect(() => partSizeFor(60 * 1024 ** 4)).toThrow(S3CallError); // over 10,000 parts of 5 GiB
  });

  it('the local store keeps its own copy: the caller deletes its file after', async () => {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    const local = new LocalObjectStore(dataDir, UploadSigner.open(dataDir));
    const file = randomFile('local', 3 * MiB);
    const expected = sha256(file);
    await local.putFile('snap/local', file, 3 * MiB, 'application/octet-stream');
    rmSync(file);
    const staged = await local.stage('snap/local');
    expect(sha256(staged.path)).toBe(expected);
    await expect(local.putFile('snap/local2', small, 1, 'application/octet-stream')).rejects.toBeInstanceOf(SizeMismatch);
    expect(await local.size('snap/local2')).toBeNull();
  });
});
