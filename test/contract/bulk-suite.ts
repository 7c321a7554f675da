// Bulk Parquet loads over real HTTP, as one body of tests run against a target (./target.ts):
// test/bulk/http-bulk.test.ts runs it embedded (with the tests of its local upload store and of a
// restart), test/cluster/contract-three-nodes.test.ts on a three-node cluster whose uploads go to
// S3 and whose calls rotate over the nodes. Presigned and multipart uploads, durable jobs with
// files and statistics, malformed files, retry, validate_only, idempotency.
import { beforeAll, expect, it } from 'vitest';
import { parquetBytes, type VectorBatch } from '../../dist/testkit/parquet-writer.js';
import { waitForJob } from '../support/jobs.js';
import type { ContractTarget, TargetProfile } from './target.js';

export const DIM = 8;
export const PARQUET = 'application/vnd.apache.parquet';

/** Row i's vector: distinct per id, so a search for it finds it first. */
export function vectorsFor(ids: number[], dim = DIM): Float32Array {
  const out = new Float32Array(ids.length * dim);
  ids.forEach((id, r) => {
    for (let j = 0; j < dim; j++) out[r * dim + j] = Math.sin(id * 0.37 + j * 1.3) + (j === id % dim ? 2 : 0);
  });
  return out;
}

export function batchOf(ids: number[], extra: Partial<VectorBatch> = {}): VectorBatch {
  return { ids: BigInt64Array.from(ids.map(BigInt)), vectors: vectorsFor(ids), dim: DIM, ...extra };
}

export const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** The bulk API of a target for one key: calls, uploads and job waits. */
export function bulkClient(t: () => ContractTarget, key: () => string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(t().url() + path, {
      method,
      headers: { 'x-api-key': key(), ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const dataset = async (name: string) => {
    const ds = (await call('POST', '/datasets', { name, dim: DIM, metric: 'l2' })).body;
    await call('POST', `/datasets/${ds.id}/ensure-engine`, {});
    await t().settle(ds.id, key());
    return ds.id as string;
  };
  const put = (url: string, bytes: Uint8Array, contentType = PARQUET, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'PUT', headers: { 'content-type': contentType, ...headers }, body: bytes });
  const waitJob = (jobId: string) => waitForJob(async () => (await call('GET', `/v1/jobs/${jobId}`)).body, `job ${jobId}`);
  /** init + PUT + complete; returns the finished job. */
  const load = async (datasetId: string, files: Uint8Array[], extra: Record<string, unknown> = {}) => {
    const init = await call('POST', `/v1/datasets/${datasetId}/upload/init`, {
      files: files.map((f, i) => ({ name: `part-${i}.parquet`, size_bytes: f.byteLength, content_type: PARQUET })),
      ...extra,
    });
    expect(init.status).toBe(200);
    for (const [i, u] of init.body.uploads.entries()) {
      const res = await put(u.upload_url, files[i]);
      expect(res.status, await res.text()).toBe(200);
    }
    const done = await call('POST', `/v1/datasets/${datasetId}/upload/complete`, { job_id: init.body.job_id, file_ids: init.body.uploads.map((u: { file_id: string }) => u.file_id) });
    expect(done.body).toEqual({ confirmed: files.length });
    return waitJob(init.body.job_id);
  };
  const count = async (datasetId: string) => (await call('GET', `/datasets/${datasetId}/stats`)).body.vector_count as number;
  const nearest = async (datasetId: string, id: number) =>
    (await call('POST', `/datasets/${datasetId}/search`, { query: Array.from(vectorsFor([id])), top_k: 1 })).body.results[0];
  return { call, dataset, put, waitJob, load, count, nearest };
}

/** Registers the bulk tests in the calling describe; `t` is read once its beforeAll has run. */
export function bulkSuite(_profile: TargetProfile, t: () => ContractTarget): void {
  let key: string;
  const { call, dataset, put, waitJob, load, count, nearest } = bulkClient(t, () => key);

  beforeAll(async () => {
    // An organization of its own: a target may serve other suites' datasets in its first one.
    key = (await t().newKey('bulk', 'admin')).key;
  });

  it('loads two presigned uploads into a dataset, with files, statistics and the job list', async () => {
    const id = await dataset('bulk-a');
    const files = [
      parquetBytes([batchOf(range(0, 1200), { metadata: { color: range(0, 1200).map((i) => (i % 2 ? 'red' : 'blue')), weight: Float64Array.from(range(0, 1200), (i) => i / 10) } })], { rowGroupRows: 500 }),
      parquetBytes([batchOf(range(1200, 2000))], { listKind: 'list', rowGroupRows: 300 }),
    ];
    const job = await load(id, files);
    expect(job).toMatchObject({ status: 'completed', vectors_inserted: 2000, documents_processed: 2, progress_percentage: 100, error_details: null, current_step: null });
    expect(job.completed_at).not.toBeNull();
    expect(await count(id)).toBe(2000);
    expect((await nearest(id, 1234)).id).toBe(1234);
    expect((await nearest(id, 77)).metadata).toEqual({ color: 'red', weight: 7.7 });
    const filtered = await call('POST', `/datasets/${id}/search`, { query: Array.from(vectorsFor([77])), top_k: 5, filters: { color: 'blue' } });
    expect(filtered.body.results.every((r: { metadata: { color: string } }) => r.metadata.color === 'blue')).toBe(true);

    const listed = await call('GET', `/ingestion/jobs/${job.job_id}/files?status=completed`);
    expect(listed.body).toMatchObject({ total: 2, counts: { completed: 2, failed: 0, pending: 0, processing: 0, skipped: 0 } });
    expect(listed.body.files[0]).toMatchObject({ status: 'completed', job_uuid: job.job_id, content_type: PARQUET, vectors_inserted: 1200, retry_count: 0 });
    expect((await call('GET', `/ingestion/jobs/${job.job_id}/files?status=bogus`)).status).toBe(400);
    const stats = (await call('GET', `/ingestion/jobs/${job.job_id}/statistics`)).body;
    expect(stats).toMatchObject({ total_files_discovered: 2, files_processed: 2, files_failed: 0, total_vectors_inserted: 2000, total_bytes_processed: files[0].byteLength + files[1].byteLength, file_type_breakdown: { [PARQUET]: 2 } });
    expect((await call('GET', `/ingestion/jobs/${job.job_id}`)).body).toEqual(job);
    const list = (await call('GET', `/ingestion/jobs?dataset_id=${id}`)).body;
    expect(list).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.jobs[0].job_id).toBe(job.job_id);
    expect((await call('GET', '/ingestion/jobs/00000000-0000-0000-0000-000000000000')).body.error).toBe('job_not_found');
  });

  it('enforces the contract limits at init', async () => {
    const id = await dataset('bulk-limits');
    const many = Array.from({ length: 1001 }, (_, i) => ({ name: `f${i}`, size_bytes: 10, content_type: PARQUET }));
    expect((await call('POST', `/v1/datasets/${id}/upload/init`, { files: many })).status).toBe(400);
    const huge = await call('POST', `/v1/datasets/${id}/upload/init`, { files: [{ name: 'x', size_bytes: 5 * 1024 ** 3 + 1, content_type: PARQUET }] });
    expect(huge.status).toBe(400);
    expect(huge.body.error).toBe('invalid_request');
    expect((await call('POST', '/v1/datasets/00000000-0000-0000-0000-000000000000/upload/init', { files: [{ name: 'x', size_bytes: 1, content_type: PARQUET }] })).status).toBe(404);
  });

  it('takes a multipart upload: 202 with the status URL, then the job loads it', async () => {
    const id = await dataset('bulk-multipart');
    const form = new FormData();
    form.append('files', new Blob([parquetBytes([batchOf(range(0, 700))], { vectorColumn: 'vectors', idColumn: 'vector_id' })], { type: PARQUET }), 'one.parquet');
    const res = await call('POST', `/v1/datasets/${id}/upload`, form);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ files_received: 1, status_url: `/v1/jobs/${res.body.job_id}` });
    const job = await waitJob(res.body.job_id);
    expect(job).toMatchObject({ status: 'completed', vectors_inserted: 700 });
    expect((await nearest(id, 650)).id).toBe(650);
    const notMultipart = await call('POST', `/v1/datasets/${id}/upload`, { files: [] });
    expect(notMultipart.status).toBe(415);
  });

  it('fails malformed files with a typed reason, and keeps what the dataset held', async () => {
    const id = await dataset('bulk-bad');
    expect((await load(id, [parquetBytes([batchOf(range(0, 100))])])).status).toBe('completed');
    const nan = vectorsFor(range(100, 110));
    nan[3 * DIM + 2] = Number.NaN;
    // A data page overwritten in the middle of a valid file (the footer intact): the decoder
    // panics inside wasm; the job must still end, with the file failed.
    const corrupt = parquetBytes([batchOf(range(5000, 7000), { metadata: { s: range(0, 2000).map((i) => `x${i % 7}`) } })], { rowGroupRows: 1000 });
    corrupt.fill(0xff, Math.floor(corrupt.length * 0.5), Math.floor(corrupt.length * 0.5) + 200);
    const cases: [string, Uint8Array[], string][] = [
      ['corrupt_file', [corrupt], '1000 vectors of earlier row groups were loaded'],
      ['not_parquet', [new TextEncoder().encode('id,embedding\n1,"[1,2]"\n')], 'Parquet'],
      ['dimension_mismatch', [parquetBytes([{ ids: BigInt64Array.from([1n, 2n]), vectors: new Float32Array(2 * 4), dim: 4 }])], 'dimension'],
      ['dimension_mismatch', [parquetBytes([batchOf(range(100, 103))], { listKind: 'list', rowLengths: [DIM, DIM - 1, DIM] })], 'row 1 has 7 values'],
      ['non_finite_value', [parquetBytes([batchOf(range(100, 110), { vectors: nan })])], 'row 3'],
      ['vector_column_missing', [parquetBytes([batchOf(range(100, 110))], { vectorColumn: 'features' })], 'no vector column'],
      ['duplicate_id', [parquetBytes([batchOf(range(200, 210))]), parquetBytes([batchOf(range(205, 215))])], 'id 205'],
      ['id_column_missing', [parquetBytes([{ ids: null, vectors: vectorsFor(range(0, 5)), dim: DIM }]), parquetBytes([batchOf(range(300, 305))])], 'single-file'],
    ];
    for (const [type, files, words] of cases) {
      const job = await load(id, files);
      const failed = (await call('GET', `/ingestion/jobs/${job.job_id}/files?status=failed`)).body.files;
      expect(failed.map((f: { error_type: string }) => f.error_type), type).toEqual([type]);
      expect(failed[0].error_message).toContain(words);
      expect(failed[0].status_reason).toBe(type);
      if (files.length === 1) {
        expect(job.status).toBe('failed');
        expect(job.error_details).toMatchObject({ type, files: [{ error_type: type }] });
      }
    }
    // The failures left the first load alone. Loaded: the rows before the failure of the corrupt
    // file (its first row group, as its error says), the first file of the duplicate-id job, and
    // the file with ids of the job whose other file had none.
    expect(await count(id)).toBe(100 + 1000 + 10 + 5);
    expect((await nearest(id, 42)).id).toBe(42);
  });

  it('loads a file without an id column at its row offsets (single-file jobs)', async () => {
    const id = await dataset('bulk-offsets');
    const job = await load(id, [parquetBytes([{ ids: null, vectors: vectorsFor(range(0, 50)), dim: DIM }], { rowGroupRows: 20 })]);
    expect(job).toMatchObject({ status: 'completed', vectors_inserted: 50 });
    expect((await nearest(id, 37)).id).toBe(37);
  });

  it('upserts into a dataset that already holds the ids, and converts float64 vectors', async () => {
    const id = await dataset('bulk-upsert');
    await call('POST', `/datasets/${id}/insert`, { vectors: [{ id: 5, values: Array(DIM).fill(100) }, { id: 999, values: Array(DIM).fill(-100) }] });
    const job = await load(id, [parquetBytes([batchOf(range(0, 10), { vectors: Float64Array.from(vectorsFor(range(0, 10))) })])]);
    expect(job.status).toBe('completed');
    expect(await count(id)).toBe(11);
    expect((await nearest(id, 5)).id).toBe(5);
    expect((await nearest(id, 5)).score).toBeLessThan(1e-6);
  });

  it('validate_only checks without loading; idempotency_key returns the same job', async () => {
    const id = await dataset('bulk-validate');
    const bytes = parquetBytes([batchOf(range(0, 40))]);
    const job = await load(id, [bytes], { validate_only: true });
    expect(job).toMatchObject({ status: 'completed', vectors_inserted: 0, validate_only: true });
    expect((await call('GET', `/ingestion/jobs/${job.job_id}/files`)).body.files[0].status_reason).toContain('valid: 40 rows');
    expect(await count(id)).toBe(0);
    const body = { files: [{ name: 'a.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }], idempotency_key: 'nightly-2026-11-22' };
    const first = await call('POST', `/v1/datasets/${id}/upload/init`, body);
    const again = await call('POST', `/v1/datasets/${id}/upload/init`, body);
    expect(again.body.job_id).toBe(first.body.job_id);
    expect(again.body.uploads.map((u: { file_id: string }) => u.file_id)).toEqual(first.body.uploads.map((u: { file_id: string }) => u.file_id));
  });

  it('retries a failed job as a fresh job; a completed job is not retryable', async () => {
    const id = await dataset('bulk-retry');
    const failed = await load(id, [new TextEncoder().encode('not parquet at all')]);
    expect(failed.status).toBe('failed');
    const retried = await call('POST', `/ingestion/jobs/${failed.job_id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.job_id).not.toBe(failed.job_id);
    expect(retried.body.retry_of).toBe(failed.job_id);
    expect((await waitJob(retried.body.job_id)).status).toBe('failed');
    const ok = await load(id, [parquetBytes([batchOf(range(0, 5))])]);
    const refused = await call('POST', `/ingestion/jobs/${ok.job_id}/retry`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('job_not_retryable');
  });
}
