// The bulk upload path with S3-compatible object storage: a real local S3 server that checks
// SigV4 signatures; presigned URLs point at it, the service reads the objects back with signed
// requests, and multipart uploads land in the bucket too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { S3ObjectStore } from '../../dist/objects/s3-store.js';
import { startS3, S3_KEY, S3_SECRET, type LocalS3 } from '../../testkit/s3.js';
import { waitForJob } from '../support/jobs.js';
import { ingestClient } from '../support/ingest.js';

const DIM = 4;
const PARQUET = 'application/vnd.apache.parquet';

function file(ids: number[]): Uint8Array {
  const vectors = Float32Array.from({ length: ids.length * DIM }, (_, i) => ids[Math.floor(i / DIM)] + (i % DIM) / 10);
  return parquetBytes([{ ids: BigInt64Array.from(ids.map(BigInt)), vectors, dim: DIM }]);
}

describe('bulk uploads with S3-compatible object storage', () => {
  let s3: LocalS3;
  let dir: string;
  let svc: Service;
  let key: string;
  let datasetId: string;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(svc.url + path, {
      method,
      headers: { 'x-api-key': key, ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const waitJob = (jobId: string) => waitForJob(async () => (await call('GET', `/v1/jobs/${jobId}`)).body, `job ${jobId}`);

  beforeAll(async () => {
    s3 = await startS3('vectors');
    dir = mkdtempSync(join(tmpdir(), 'sable-bulk-s3-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 's3-endpoint': s3.endpoint, 's3-bucket': 'vectors', 's3-prefix': 'uploads' }, {
      SABLE_S3_ACCESS_KEY_ID: S3_KEY,
      SABLE_S3_SECRET_ACCESS_KEY: S3_SECRET,
    }));
    key = svc.createdAdminKey!;
    datasetId = (await call('POST', '/datasets', { name: 's3', dim: DIM, metric: 'l2' })).body.id;
    await call('POST', `/datasets/${datasetId}/ensure-engine`, {});
  });
  afterAll(async () => {
    await svc.close();
    await s3.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('presigns S3 URLs that refuse another content type or size, and loads what was PUT', async () => {
    const bytes = [file([1, 2, 3]), file([10, 11])];
    const init = await call('POST', `/v1/datasets/${datasetId}/upload/init`, {
      files: bytes.map((b, i) => ({ name: `p${i}.parquet`, size_bytes: b.byteLength, content_type: PARQUET })),
    });
    expect(init.status).toBe(200);
    const [a, b] = init.body.uploads;
    expect(a.upload_url.startsWith(`${s3.endpoint}/vectors/uploads/`)).toBe(true);
    expect(a.upload_url).toContain('X-Amz-Signature=');
    expect(a.expires_in).toBe(3600);
    const putTo = (url: string, body: Uint8Array, type = PARQUET) => fetch(url, { method: 'PUT', headers: { 'content-type': type }, body });
    expect((await putTo(a.upload_url, bytes[0], 'text/csv')).status).toBe(403);
    expect((await putTo(a.upload_url, bytes[0].subarray(0, 100))).status).toBe(403);
    expect((await putTo(a.upload_url.replace(/X-Amz-Signature=[0-9a-f]{4}/, 'X-Amz-Signature=0000'), bytes[0])).status).toBe(403);
    expect((await putTo(a.upload_url, bytes[0])).status).toBe(200);
    expect((await putTo(b.upload_url, bytes[1])).status).toBe(200);
    const done = await call('POST', `/v1/datasets/${datasetId}/upload/complete`, { job_id: init.body.job_id, file_ids: [a.file_id, b.file_id] });
    expect(done.body).toEqual({ confirmed: 2 });
    const job = await waitJob(init.body.job_id);
    expect(job).toMatchObject({ status: 'completed', vectors_inserted: 5 });
    const hit = (await call('POST', `/datasets/${datasetId}/search`, { query: [11, 11.1, 11.2, 11.3], top_k: 1 })).body.results[0];
    expect(hit.id).toBe(11);
  });

  it('a listed file that never reached the bucket fails the job with upload_missing', async () => {
    const b = file([20]);
    const init = await call('POST', `/v1/datasets/${datasetId}/upload/init`, { files: [{ name: 'x.parquet', size_bytes: b.byteLength, content_type: PARQUET }] });
    const done = await call('POST', `/v1/datasets/${datasetId}/upload/complete`, { job_id: init.body.job_id, file_ids: [init.body.uploads[0].file_id] });
    expect(done.body).toEqual({ confirmed: 0 });
    const job = await waitJob(init.body.job_id);
    expect(job.status).toBe('failed');
    expect(job.error_details.files[0].error_type).toBe('upload_missing');
  });

  it('stores multipart uploads in the bucket and loads them from there', async () => {
    const form = new FormData();
    form.append('files', new Blob([file([30, 31, 32, 33])], { type: PARQUET }), 'm.parquet');
    const res = await call('POST', `/v1/datasets/${datasetId}/upload`, form);
    expect(res.status).toBe(202);
    const job = await waitJob(res.body.job_id);
    expect(job).toMatchObject({ status: 'completed', vectors_inserted: 4 });
    const f = (await call('GET', `/ingestion/jobs/${job.job_id}/files`)).body.files[0];
    // The object is in the bucket: a signed HEAD finds it with its size; an anonymous GET is refused.
    const bucket = new S3ObjectStore({ endpoint: s3.endpoint, bucket: 'vectors', region: 'us-east-1', accessKeyId: S3_KEY, secretAccessKey: S3_SECRET, prefix: 'uploads' }, join(dir, 'probe'));
    expect(await bucket.size(f.file_path)).toBe(f.file_size_bytes);
    expect(await bucket.size(`${f.file_path}-absent`)).toBeNull();
    expect((await fetch(`${s3.endpoint}/vectors/uploads/${f.file_path}`)).status).toBe(403);
    expect((await call('GET', `/datasets/${datasetId}/stats`)).body.vector_count).toBe(9);
  });

  it('keeps file_upload originals in the bucket: a document download redirects to a presigned GET that works', async () => {
    const api = ingestClient(() => svc.url, () => key);
    const ds = await api.dataset('s3 originals');
    const src = await api.source('s3 originals');
    const body = '# Kept in the bucket\n\nThis original lives in object storage.';
    const job = await api.upload(src, ds, [{ name: 'kept.md', type: 'text/markdown', bytes: body }]);
    expect(job.status).toBe('completed');
    const [doc] = await api.documents(ds);
    expect(doc.download_available).toBe(true);
    const res = await api.call('GET', `/datasets/${ds}/documents/${doc.id}/download`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${s3.endpoint}/vectors/uploads/`)).toBe(true);
    expect(location).toContain('X-Amz-Signature=');
    const original = await fetch(location);
    expect(original.status).toBe(200);
    expect(await original.text()).toBe(body);
  });
});
