// Bulk Parquet loads over real HTTP, embedded: the tests any target runs are
// test/contract/bulk-suite.ts (test/cluster/contract-three-nodes.test.ts runs them on a three-node
// cluster); here, with them, the tests of what only the embedded service has: the local upload
// store in its data directory (files removed with their dataset, URLs signed with its key), the
// node:http adapter, and a job resumed after the service stopped halfway through it.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { UploadSigner } from '../../dist/objects/signer.js';
import { ControlStore } from '../../dist/catalog/store.js';
import { LmdbJobQueue } from '../../dist/jobs/lmdb-queue.js';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { batchOf, bulkClient, bulkSuite, DIM, PARQUET, range } from '../contract/bulk-suite.js';
import { embeddedProfile, startEmbedded, type EmbeddedTarget } from '../contract/embedded-target.js';

describe('bulk Parquet uploads and jobs over HTTP', () => {
  let target: EmbeddedTarget;
  const { call, dataset, put, waitJob, load, count } = bulkClient(() => target, () => target.admin);

  beforeAll(async () => {
    target = await startEmbedded('auto');
  });
  afterAll(async () => {
    await target?.close();
  });

  bulkSuite(embeddedProfile('auto'), () => target);

  it('deleting a dataset removes its uploaded files, and an upload still open takes no more bytes', async () => {
    const id = await dataset('bulk-gone');
    const bytes = parquetBytes([batchOf(range(0, 50))]);
    expect((await load(id, [bytes])).status).toBe('completed');
    const open = await call('POST', `/v1/datasets/${id}/upload/init`, { files: [{ name: 'late.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
    const filesUnder = (d: string): string[] => (existsSync(d) ? readdirSync(d, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name) : []);
    const stored = join(target.embedded.dir, 'uploads', id);
    expect(filesUnder(stored)).toHaveLength(1);
    expect((await call('DELETE', `/datasets/${id}`)).status).toBe(204);
    expect(filesUnder(stored)).toEqual([]);
    const late = await put(open.body.uploads[0].upload_url, bytes);
    expect(late.status).toBe(403);
    expect(filesUnder(stored)).toEqual([]);
    const job = (await call('GET', `/ingestion/jobs/${open.body.job_id}`)).body;
    expect(job).toMatchObject({ status: 'failed', error_details: { type: 'dataset_unavailable' } });
  });

  it('refuses a PUT with another content type, another size, a forged or an expired URL (403)', async () => {
    const id = await dataset('bulk-put');
    const bytes = parquetBytes([batchOf(range(0, 10))]);
    const init = await call('POST', `/v1/datasets/${id}/upload/init`, { files: [{ name: 'a.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
    const u = init.body.uploads[0];
    expect(u.expires_in).toBe(3600);
    expect((await put(u.upload_url, bytes, 'application/octet-stream')).status).toBe(403);
    expect((await put(u.upload_url, bytes.subarray(1))).status).toBe(403);
    // Every spelling but the service's own is refused, down to the MAC's padding bits.
    for (const at of [-1, -20]) {
      const i = u.upload_url.length + at;
      const forged = u.upload_url.slice(0, i) + (u.upload_url[i] === 'A' ? 'B' : 'A') + u.upload_url.slice(i + 1);
      expect((await put(forged, bytes)).status).toBe(403);
    }
    // An hour-old URL, signed with the service's own key: still refused.
    const signer = UploadSigner.open(target.embedded.dir);
    const token = signer.verify(u.upload_url.split('/uploads/')[1])!;
    const expired = `${target.url()}/uploads/${signer.sign({ ...token, expiresAt: Math.floor(Date.now() / 1000) - 1 })}`;
    const refused = await put(expired, bytes);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error).toBe('forbidden');
    // The API key is not what authenticates the URL, and nothing was stored by the refusals.
    const missing = await call('POST', `/v1/datasets/${id}/upload/complete`, { job_id: init.body.job_id, file_ids: [u.file_id] });
    expect(missing.body).toEqual({ confirmed: 0 });
    const job = await waitJob(init.body.job_id);
    expect(job.status).toBe('failed');
    // complete again (a client retrying after a dropped answer): the same count, no second run.
    expect((await call('POST', `/v1/datasets/${id}/upload/complete`, { job_id: init.body.job_id, file_ids: [u.file_id] })).body).toEqual({ confirmed: 0 });
    const file = (await call('GET', `/ingestion/jobs/${job.job_id}/files`)).body.files[0];
    expect(file).toMatchObject({ status: 'failed', error_type: 'upload_missing' });
  });

  it('streams uploads through the node:http adapter too', async () => {
    const nodeDir = mkdtempSync(join(tmpdir(), 'sable-bulk-node-'));
    const other = await startService(loadConfig({ port: '0', 'data-dir': nodeDir, 'http-adapter': 'node' }, {}));
    try {
      expect(other.adapter).toBe('node:http');
      const k = other.createdAdminKey!;
      const api = async (method: string, path: string, body?: unknown) =>
        (await fetch(other.url + path, { method, headers: { 'x-api-key': k, ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }) }, body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body) })).json();
      const ds = await api('POST', '/datasets', { name: 'n', dim: DIM, metric: 'l2' });
      await api('POST', `/datasets/${ds.id}/ensure-engine`, {});
      const bytes = parquetBytes([batchOf(range(0, 300))]);
      const init = await api('POST', `/v1/datasets/${ds.id}/upload/init`, { files: [{ name: 'a.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
      expect((await put(init.uploads[0].upload_url, bytes, 'text/plain')).status).toBe(403);
      expect((await put(init.uploads[0].upload_url, bytes)).status).toBe(200);
      expect(await api('POST', `/v1/datasets/${ds.id}/upload/complete`, { job_id: init.job_id, file_ids: [init.uploads[0].file_id] })).toEqual({ confirmed: 1 });
      const form = new FormData();
      form.append('files', new Blob([parquetBytes([batchOf(range(300, 500))])], { type: PARQUET }), 'b.parquet');
      const multi = await api('POST', `/v1/datasets/${ds.id}/upload`, form);
      for (const jobId of [init.job_id, multi.job_id]) {
        for (let i = 0; i < 400; i++) {
          const j = await api('GET', `/v1/jobs/${jobId}`);
          if (j.status !== 'pending' && j.status !== 'running') {
            expect(j.status).toBe('completed');
            break;
          }
          await new Promise((r) => setTimeout(r, 25));
        }
      }
      expect((await api('GET', `/datasets/${ds.id}/stats`)).vector_count).toBe(500);
    } finally {
      await other.close();
      rmSync(nodeDir, { recursive: true, force: true });
    }
  });

  it('a job interrupted by a stop resumes on the next start and ends completed', async () => {
    const id = await dataset('bulk-resume');
    const ids = range(0, 30000);
    const bytes = parquetBytes([batchOf(ids)], { rowGroupRows: 250 });
    const init = await call('POST', `/v1/datasets/${id}/upload/init`, { files: [{ name: 'big.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
    await put(init.body.uploads[0].upload_url, bytes);
    await call('POST', `/v1/datasets/${id}/upload/complete`, { job_id: init.body.job_id, file_ids: [init.body.uploads[0].file_id] });
    const fileStatus = async () => (await call('GET', `/ingestion/jobs/${init.body.job_id}/files`)).body.files[0].status;
    for (let i = 0; i < 400 && (await fileStatus()) !== 'processing'; i++) await new Promise((r) => setTimeout(r, 5));
    await target.stop();
    // What the stopped service left on disk: the job still running, its file mid-way.
    const control = new ControlStore(target.embedded.dir);
    const left = new LmdbJobQueue(control);
    expect(await left.get(init.body.job_id)).toMatchObject({ status: 'running' });
    expect((await left.files(init.body.job_id))[0]).toMatchObject({ status: 'processing' });
    expect((await left.files(init.body.job_id))[0].rows_read).toBeLessThan(30000);
    await control.close();
    await target.start();
    const job = await waitJob(init.body.job_id);
    expect(job).toMatchObject({ status: 'completed', vectors_inserted: 30000 });
    const file = (await call('GET', `/ingestion/jobs/${job.job_id}/files`)).body.files[0];
    expect(file).toMatchObject({ status: 'completed', retry_count: 1 });
    expect(await count(id)).toBe(30000);
    expect(readFileSync(join(target.embedded.dir, 'upload.key'), 'utf8').length).toBeGreaterThan(0);
  });
});
