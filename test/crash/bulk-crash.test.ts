// A bulk load killed with SIGKILL halfway: `sable serve` runs as a child process, loads a
// Parquet file, and is killed while the job runs. The next start finds the job `running` on
// disk, resumes it, and ends it completed with every vector of the file; nothing stays running.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { waitForJob } from '../support/jobs.js';
import { serve } from '../support/serve.js';

const DIM = 16;
const ROWS = 40_000;
const PARQUET = 'application/vnd.apache.parquet';

describe('a bulk load killed with SIGKILL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-bulk-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('resumes on the next start and completes with every vector', async () => {
    let svc = await serve(dir);
    const key = readFileSync(join(dir, 'admin.key'), 'utf8').trim();
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(svc.url + path, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return res.json();
    };
    const ds = await call('POST', '/datasets', { name: 'crash', dim: DIM, metric: 'l2' });
    await call('POST', `/datasets/${ds.id}/ensure-engine`, {});
    const ids = BigInt64Array.from({ length: ROWS }, (_, i) => BigInt(i));
    const vectors = Float32Array.from({ length: ROWS * DIM }, (_, i) => Math.floor(i / DIM) + (i % DIM) / 100);
    const bytes = parquetBytes([{ ids, vectors, dim: DIM }], { rowGroupRows: 500 });
    const init = await call('POST', `/v1/datasets/${ds.id}/upload/init`, { files: [{ name: 'v.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
    expect((await fetch(init.uploads[0].upload_url, { method: 'PUT', headers: { 'content-type': PARQUET }, body: bytes })).status).toBe(200);
    await call('POST', `/v1/datasets/${ds.id}/upload/complete`, { job_id: init.job_id, file_ids: [init.uploads[0].file_id] });
    // Kill once some rows are in but not all.
    for (let i = 0; i < 2000; i++) {
      const s = await call('GET', `/datasets/${ds.id}/stats`);
      if (s.vector_count > 0) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    await svc.stop('SIGKILL');

    svc = await serve(dir);
    try {
      const job = await waitForJob(() => call('GET', `/v1/jobs/${init.job_id}`), `job ${init.job_id}`);
      expect(job).toMatchObject({ status: 'completed', vectors_inserted: ROWS });
      const files = await call('GET', `/ingestion/jobs/${init.job_id}/files`);
      expect(files.files[0]).toMatchObject({ status: 'completed', retry_count: 1 });
      expect((await call('GET', `/datasets/${ds.id}/stats`)).vector_count).toBe(ROWS);
      const hit = await call('POST', `/datasets/${ds.id}/search`, { query: Array.from(vectors.subarray(12345 * DIM, 12346 * DIM)), top_k: 1 });
      expect(hit.results[0].id).toBe(12345);
    } finally {
      await svc.stop('SIGTERM');
    }
  }, 60_000);
});
