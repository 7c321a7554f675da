// Crash suite, damaged files: with the service stopped, index snapshots are truncated, replaced by
// garbage or by another dataset's valid snapshot (same ids, other vectors), and an upload is torn
// (its stored bytes cut short after the upload was acknowledged, and an upload cut by a kill
// mid-body). On the next start nothing damaged is trusted: snapshots are rebuilt from the store
// and searches equal exact search over the stored rows; a torn upload is reported, never loaded.
import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync, mkdtempSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { crashSeed, expectExactTop10, report, seededRandom, sleep } from '../support/crash.js';
import { waitForJob } from '../support/jobs.js';
import { adminKey, client, serve, succeeding, type Served } from '../support/serve.js';

const DIM = 16;
const ROWS = 4_000;
const PARQUET = 'application/vnd.apache.parquet';

describe('crash suite: damaged snapshots and torn uploads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-crash-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('rebuilds truncated, garbage and foreign snapshots; reports torn uploads', async () => {
    const seed = crashSeed('files');
    const rand = seededRandom(seed);
    const started = Date.now();
    let svc: Served = await serve(dir);
    const call = client(() => svc.url, adminKey(dir));
    const ok = succeeding(call);

    // Datasets with the same ids and other vectors: a swapped snapshot passes every id check.
    const datasets: { id: string; rows: Map<number, number[]> }[] = [];
    for (let d = 0; d < 4; d++) {
      const ds = await ok('POST', '/datasets', { name: `snap-${d}`, dim: DIM, metric: 'cosine' });
      await ok('POST', `/datasets/${ds.id}/ensure-engine`);
      await ok('PUT', `/datasets/${ds.id}/promotion-policy`, { max_buffer_vectors: 1000 });
      const rows = new Map<number, number[]>();
      for (let i = 0; i < ROWS; i += 500) {
        const vectors = Array.from({ length: 500 }, (_, j) => ({ id: i + j, values: Array.from({ length: DIM }, () => rand() * 2 - 1) }));
        for (const v of vectors) rows.set(v.id, v.values);
        await ok('POST', `/datasets/${ds.id}/insert`, { vectors });
      }
      datasets.push({ id: ds.id, rows });
    }
    for (const d of datasets) {
      let index = await ok('GET', `/datasets/${d.id}/index`);
      for (let i = 0; index.status !== 'ready' && i < 400; i++, await sleep(25)) index = await ok('GET', `/datasets/${d.id}/index`);
      expect(index.status).toBe('ready');
    }
    const exactEverywhere = async (label: string) => {
      for (const d of datasets) {
        for (let q = 0; q < 4; q++) {
          const query = Array.from({ length: DIM }, () => rand() * 2 - 1);
          const r = await ok('POST', `/datasets/${d.id}/search`, { query, top_k: 10, nprobe_override: 1_000_000 });
          expectExactTop10(r.results, d.rows, query, `${label}: ${d.id}`);
        }
        const probe = Math.floor(rand() * ROWS);
        const self = await ok('POST', `/datasets/${d.id}/search`, { query: d.rows.get(probe), top_k: 1 });
        expect(self.results[0].id, `${label}: row ${probe} of ${d.id} finds itself`).toBe(probe);
      }
    };
    await exactEverywhere('before');

    // A torn upload: acknowledged, then its stored bytes cut short.
    const target = datasets[0]!.id;
    const ids = BigInt64Array.from({ length: 2000 }, (_, i) => BigInt(100_000 + i));
    const bytes = parquetBytes([{ ids, vectors: Float32Array.from({ length: 2000 * DIM }, () => rand()), dim: DIM }], { rowGroupRows: 250 });
    const torn = await ok('POST', `/datasets/${target}/upload/init`, { files: [{ name: 'torn.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
    expect((await fetch(torn.uploads[0].upload_url, { method: 'PUT', headers: { 'content-type': PARQUET }, body: bytes })).status).toBe(200);
    // An upload cut by the kill: a PUT that declares the whole length and sends half of it.
    const cut = await ok('POST', `/datasets/${target}/upload/init`, { files: [{ name: 'cut.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
    const half = request(cut.uploads[0].upload_url, { method: 'PUT', headers: { 'content-type': PARQUET, 'content-length': String(bytes.byteLength) } });
    half.on('error', () => {});
    half.write(bytes.subarray(0, bytes.byteLength >> 1));
    await sleep(200);
    await svc.stop('SIGKILL');

    // The damage, done while the service is down.
    const segments = join(dir, 'engine', 'segments');
    const files = readdirSync(segments).filter((f) => f.endsWith('.seg')).sort();
    // Snapshot names are `<dataset uid>-<partition>.seg`; datasets were made in order, so their uids sort with them.
    const uids = [...new Set(files.map((f) => Number(f.split('-')[0])))].sort((x, y) => x - y);
    const ofDataset = (k: number) => files.filter((f) => f.startsWith(`${uids[k]}-`));
    const [a, b, c, e] = [ofDataset(0), ofDataset(1), ofDataset(2), ofDataset(3)];
    expect(a.length && b.length && c.length && e.length, `snapshots of every dataset: ${files.join(', ')}`).toBeTruthy();
    const size = statSync(join(segments, a[0]!)).size;
    truncateSync(join(segments, a[0]!), Math.floor(size * 0.9));
    writeFileSync(join(segments, b[0]!), Buffer.alloc(4096, 7));
    // Foreign: dataset 2's snapshot over dataset 3's (same ids, other vectors).
    writeFileSync(join(segments, e[0]!), readFileSync(join(segments, c[0]!)));
    console.log(`crash files: truncated ${a[0]}, garbage over ${b[0]}, ${c[0]} over ${e[0]}`);
    const uploads = join(dir, 'uploads');
    const stored = readdirSync(uploads, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.endsWith('.part')).map((e) => join(e.parentPath, e.name));
    expect(stored.length, 'the acknowledged upload is stored').toBe(1);
    truncateSync(stored[0]!, Math.floor(bytes.byteLength / 3));

    svc = await serve(dir);
    try {
      await exactEverywhere('after the damage');
      // Neither file is confirmed; each job ends failed, its file naming why: never loaded.
      for (const [upload, why] of [[torn, 'size_mismatch'], [cut, 'upload_missing']] as const) {
        const done = await ok('POST', `/datasets/${target}/upload/complete`, { job_id: upload.job_id, file_ids: [upload.uploads[0].file_id] });
        expect(done.confirmed).toBe(0);
        const job = await waitForJob(async () => (await call('GET', `/v1/jobs/${upload.job_id}`)).body, `upload ${why}`);
        expect(job.status, JSON.stringify(job)).toBe('failed');
        const listed = await ok('GET', `/ingestion/jobs/${upload.job_id}/files`);
        expect(listed.files[0], JSON.stringify(listed.files[0])).toMatchObject({ status: 'failed', error_type: why });
      }
      expect((await ok('GET', `/datasets/${target}/stats`)).vector_count).toBe(ROWS);
      const loaded = await ok('POST', `/datasets/${target}/search`, { query: Array.from({ length: DIM }, () => 0.5), top_k: 50 });
      expect(loaded.results.filter((r: { id: number }) => r.id >= 100_000)).toEqual([]);
    } finally {
      await svc.stop('SIGTERM');
    }
    // The rebuilt snapshots were written back whole: a clean restart trusts them and agrees.
    svc = await serve(dir);
    try {
      await exactEverywhere('after a clean restart');
    } finally {
      await svc.stop('SIGTERM');
    }
    report({
      scenario: 'files',
      seed,
      kills: 1,
      acknowledgedChecked: datasets.length * ROWS,
      lost: 0,
      stuck: 0,
      details: { 'snapshots damaged': 3, 'torn uploads': 2 },
      seconds: (Date.now() - started) / 1000,
    });
  });
});
