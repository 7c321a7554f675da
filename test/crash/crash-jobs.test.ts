// Crash suite, background work: each round starts, at once, a Parquet bulk load, an ingestion job
// of uploaded files, a schedule's run (a crawl of a local site), an index rebuild and a schema
// change that promotes a metadata field to a typed filter column, then kills the service with
// SIGKILL at a random moment and starts it again on the same data directory. After the restart
// nothing stays pending, running or building: every job resumes to completed (or ends failed with
// a reason), every index is ready, and searches over the recovered rows (plain and filtered by
// the promoted field) equal exact search over them. `npm run test:crash` runs 20 kills.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { ingestClient } from '../support/ingest.js';
import { crashSeed, expectExactTop10, killsFor, report, seededRandom, sleep } from '../support/crash.js';
import { adminKey, client, serve, succeeding, type Served } from '../support/serve.js';

const DIM = 16;
const BULK_ROWS = 20_000;
const ROWS = 3_000;
const FIELDS = 24;
const PAGES = 12;
const FILES = 10;
const KILLS = killsFor(2);
/** How long a recovered job may take to end before it counts as stuck. */
const RECOVERY_MS = 90_000;
const PARQUET = 'application/vnd.apache.parquet';

/** A small site for the schedule's crawl: PAGES pages in a ring, each linking the next. */
function site(): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    const m = /^\/p(\d+)$/.exec(req.url ?? '');
    const n = m ? Number(m[1]) : 0;
    const body = `<html><head><title>Page ${n}</title></head><body><h1>Page ${n}</h1><p>${'Harbour pilots and tide tables. '.repeat(20)}</p>` +
      `<a href="/p${(n + 1) % PAGES}">next</a></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe('crash suite: background work under kill -9', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-crash-jobs-'));
  let web: { server: Server; base: string };
  beforeAll(async () => {
    web = await site();
    // The crawl reads 127.0.0.1; the child service inherits this.
    process.env.SABLE_ALLOW_PRIVATE_NETWORK = 'true';
  });
  afterAll(() => {
    web.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`resumes or ends every job and build across ${KILLS} kills`, async () => {
    const seed = crashSeed('jobs');
    const rand = seededRandom(seed);
    const started = Date.now();
    let svc: Served = await serve(dir);
    const call = client(() => svc.url, adminKey(dir));
    const ok = succeeding(call);
    /** A vector dataset; `text` ones take the default embedding model, for ingested text. */
    const newDataset = async (name: string, text = false) => {
      const ds = await ok('POST', '/datasets', text ? { name } : { name, dim: DIM, metric: 'cosine' });
      await ok('POST', `/datasets/${ds.id}/ensure-engine`);
      return ds.id as string;
    };

    // A dataset whose rows carry FIELDS numeric metadata fields; each round types one of them.
    const rowsId = await newDataset('rows');
    const rows = new Map<number, number[]>();
    const fieldsOf = new Map<number, Record<string, number>>();
    const batch = Array.from({ length: ROWS }, (_, id) => {
      const values = Array.from({ length: DIM }, () => rand() * 2 - 1);
      const metadata = Object.fromEntries(Array.from({ length: FIELDS }, (_, f) => [`k${f}`, Math.floor(rand() * 40)]));
      rows.set(id, values);
      fieldsOf.set(id, metadata);
      return { id, values, metadata };
    });
    for (let i = 0; i < ROWS; i += 500) await ok('POST', `/datasets/${rowsId}/insert`, { vectors: batch.slice(i, i + 500) });
    const docsId = await newDataset('docs', true);
    const upload = await ok('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'files', config: {} });
    const crawlId = await newDataset('crawl', true);
    const webSource = await ok('POST', '/ingestion/sources', { source_type: 'web', name: 'site', config: { start_urls: [`${web.base}/p0`], max_depth: PAGES } });
    const schedule = await ok('POST', '/ingestion/schedules', { source_id: webSource.id, dataset_id: crawlId, cron: '0 3 * * *' });

    const jobIds: string[] = [];
    const bulk: { datasetId: string; jobId: string; vectors: Float32Array }[] = [];
    const promoted: number[] = [];
    let docsSent = 0;
    let stuck = 0;
    let failed = 0;
    const failures: string[] = [];

    const startWork = async (round: number) => {
      // Each start may be cut by the kill: what was acknowledged is what the check expects.
      const work: Promise<unknown>[] = [];
      work.push((async () => {
        const datasetId = await newDataset(`bulk-${round}`);
        const ids = BigInt64Array.from({ length: BULK_ROWS }, (_, i) => BigInt(i));
        const vectors = Float32Array.from({ length: BULK_ROWS * DIM }, () => rand() * 2 - 1);
        const bytes = parquetBytes([{ ids, vectors, dim: DIM }], { rowGroupRows: 1000 });
        const init = await ok('POST', `/datasets/${datasetId}/upload/init`, { files: [{ name: 'v.parquet', size_bytes: bytes.byteLength, content_type: PARQUET }] });
        const put = await fetch(init.uploads[0].upload_url, { method: 'PUT', headers: { 'content-type': PARQUET }, body: bytes });
        expect(put.status).toBe(200);
        await ok('POST', `/datasets/${datasetId}/upload/complete`, { job_id: init.job_id, file_ids: [init.uploads[0].file_id] });
        bulk.push({ datasetId, jobId: init.job_id, vectors });
        jobIds.push(init.job_id);
      })());
      work.push((async () => {
        const files = Array.from({ length: FILES }, (_, i) => ({ name: `r${round}-f${i}.md`, bytes: new TextEncoder().encode(`# Round ${round} file ${i}\n\n${'Tide tables and harbour notes. '.repeat(40)}`) }));
        const init = await ok('POST', `/ingestion/sources/${upload.id}/upload/init`, { dataset_id: docsId, files: files.map((f) => ({ name: f.name, size_bytes: f.bytes.byteLength, content_type: 'text/markdown' })) });
        for (const [i, u] of init.uploads.entries()) expect((await fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': 'text/markdown' }, body: files[i]!.bytes })).status).toBe(200);
        await ok('POST', `/ingestion/sources/${upload.id}/upload/complete`, { job_id: init.job_id, file_ids: init.uploads.map((u: { file_id: string }) => u.file_id) });
        jobIds.push(init.job_id);
        docsSent += FILES;
      })());
      work.push((async () => {
        const r = await call('POST', `/ingestion/schedules/${schedule.id}/trigger`);
        // A run still in flight from before the kill answers 409 schedule_busy: that run is checked.
        if (r.status === 409) return expect(r.body.error).toBe('schedule_busy');
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        jobIds.push(r.body.id ?? r.body.job_id);
      })());
      work.push(ok('POST', `/datasets/${rowsId}/index/rebuild`));
      work.push((async () => {
        const field = round % FIELDS;
        await ok('PATCH', `/datasets/${rowsId}/schema`, { schema: [{ name: `k${field}`, type: 'i32' }] });
        promoted.push(field);
      })());
      return Promise.allSettled(work);
    };

    const settle = async (label: string) => {
      const deadline = Date.now() + RECOVERY_MS;
      for (const jobId of jobIds) {
        let job = await ok('GET', `/v1/jobs/${jobId}`);
        while ((job.status === 'pending' || job.status === 'running') && Date.now() < deadline) {
          await sleep(50);
          job = await ok('GET', `/v1/jobs/${jobId}`);
        }
        if (job.status === 'pending' || job.status === 'running') {
          stuck++;
          failures.push(`${label}: job ${jobId} still ${job.status}`);
        } else if (job.status !== 'completed') {
          failed++;
          // Failing is allowed only with a reason; the resumable kinds here should complete.
          failures.push(`${label}: job ${jobId} ended ${job.status}: ${job.message ?? job.error ?? '(no reason)'}`);
        }
      }
      for (const id of [rowsId, docsId, crawlId, ...bulk.map((b) => b.datasetId)]) {
        let index = await ok('GET', `/datasets/${id}/index`);
        // `empty`: nothing to index yet, as ready as it gets.
        const settled = () => index.status === 'ready' || index.status === 'empty';
        while (!settled() && Date.now() < deadline) {
          await sleep(50);
          index = await ok('GET', `/datasets/${id}/index`);
        }
        if (!settled()) {
          stuck++;
          failures.push(`${label}: index of ${id} still ${index.status}`);
        }
      }
    };

    const documentsOf = (datasetId: string) => ingestClient(() => svc.url, () => adminKey(dir)).documents(datasetId);

    const verify = async (label: string) => {
      const nearest = (id: string, query: number[], extra: object = {}) => ok('POST', `/datasets/${id}/search`, { query, top_k: 10, nprobe_override: 1_000_000, ...extra });
      const byId = (a: number, b: number) => a - b;
      const idsOf = (r: { results: { id: number }[] }) => r.results.map((x) => x.id).sort(byId);
      for (const b of bulk) {
        expect((await ok('GET', `/datasets/${b.datasetId}/stats`)).vector_count, `${label}: bulk rows`).toBe(BULK_ROWS);
        const all = new Map(Array.from({ length: BULK_ROWS }, (_, i) => [i, b.vectors.subarray(i * DIM, (i + 1) * DIM)] as [number, Float32Array]));
        const query = Array.from({ length: DIM }, () => rand() * 2 - 1);
        expectExactTop10((await nearest(b.datasetId, query)).results, all, query, `${label}: bulk`);
      }
      expect((await ok('GET', `/datasets/${rowsId}/stats`)).vector_count).toBe(ROWS);
      for (let q = 0; q < 3; q++) {
        const query = Array.from({ length: DIM }, () => rand() * 2 - 1);
        expectExactTop10((await nearest(rowsId, query)).results, rows, query, `${label}: rows`);
      }
      // The promoted fields are typed in the schema, and filtering on them finds exactly the rows.
      const schema = (await ok('GET', `/datasets/${rowsId}`)).schema as { name: string; type: string }[];
      for (const field of new Set(promoted)) {
        expect(schema.find((e) => e.name === `k${field}`)?.type, `${label}: k${field} typed`).toBe('i32');
        const value = Math.floor(rand() * 40);
        const matching = new Map([...rows].filter(([id]) => fieldsOf.get(id)![`k${field}`] === value));
        const query = Array.from({ length: DIM }, () => rand() * 2 - 1);
        const found = await ok('POST', `/datasets/${rowsId}/search`, { query, top_k: 200, nprobe_override: 1_000_000, filters: { [`k${field}`]: value } });
        expect(idsOf(found), `${label}: filter on promoted k${field}`).toEqual([...matching.keys()].sort(byId));
      }
      // Files and pages are each in the catalog once, their chunks once in the index.
      const docs = await documentsOf(docsId);
      expect(docs.length, `${label}: uploaded documents`).toBe(docsSent);
      const chunks = docs.reduce((s: number, d: { chunk_count: number }) => s + d.chunk_count, 0);
      expect((await ok('GET', `/datasets/${docsId}/stats`)).vector_count, `${label}: document chunks`).toBe(chunks);
      expect((await documentsOf(crawlId)).length, `${label}: crawled pages`).toBe(PAGES);
    };

    let kills = 0;
    try {
      for (let round = 0; round < KILLS; round++) {
        const work = startWork(round);
        await sleep(50 + rand() * 1500);
        await svc.stop('SIGKILL');
        kills++;
        // A request the kill cut off fails to fetch; any other failure is the service's.
        for (const r of await work) if (r.status === 'rejected' && !/fetch failed|ECONNRESET|other side closed/i.test(String(r.reason?.message ?? r.reason) + String(r.reason?.cause ?? ''))) throw r.reason;
        svc = await serve(dir);
        const t0 = Date.now();
        await settle(`kill ${kills}`);
        console.log(`crash jobs: kill ${kills} settled in ${Date.now() - t0} ms`);
        await verify(`kill ${kills}`);
      }
    } finally {
      await svc.stop('SIGTERM');
    }
    report({
      scenario: 'jobs',
      seed,
      kills,
      acknowledgedChecked: bulk.length * BULK_ROWS + ROWS + docsSent,
      lost: 0,
      stuck,
      details: { 'jobs checked': jobIds.length, 'jobs failed': failed, 'bulk loads': bulk.length, 'fields promoted': new Set(promoted).size },
      seconds: (Date.now() - started) / 1000,
    });
    expect(failures).toEqual([]);
  }, 120_000 + KILLS * 120_000);
});
