// Tail partitions: indexes with lists keep one partition. Partitions sealed beside the largest
// fold into it when their share or count is due, its index extended without training (rows
// encoded against its lists) until it holds twice the rows it was trained on, then trained anew;
// once the dataset is idle, and at flush, every tail folds and an index past 1.25 times its
// training rows is trained anew. The extended index finds every row, reopens from
// its snapshot, and keeps the one-bit codes it was built with.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Engine, ShardPool, type Dataset } from '../../dist/engine/index.js';
import { clustered, exactTopK, recall, row, type Metric } from '../support/data.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function upsertInBatches(ds: Dataset, data: Float32Array, dim: number, first: number, count: number, batch: number) {
  for (let at = first; at < first + count; at += batch) {
    const n = Math.min(batch, first + count - at);
    const ids = Array.from({ length: n }, (_, i) => at + i);
    await ds.upsert(ids, data.subarray(at * dim, (at + n) * dim), ids.map((id) => ({ id })));
  }
}

async function recallOf(ds: Dataset, metric: Metric, base: Float32Array, queries: Float32Array, dim: number, nprobe?: number) {
  const nq = queries.length / dim;
  const results = await ds.searchBatch(queries, { topK: 10, includeMetadata: false, nprobe });
  let sum = 0;
  for (let q = 0; q < nq; q++) sum += recall(results[q].map((h) => h.id), exactTopK(metric, base, dim, row(queries, dim, q), 10));
  return sum / nq;
}

describe('tail partitions', () => {
  it('fold into the largest index without training while writes come, and train anew at flush; durably', async () => {
    const DIM = 32;
    const N = 3500;
    const dir = mkdtempSync(join(tmpdir(), 'sable-fold-'));
    dirs.push(dir);
    const data = clustered(N + 30, DIM, 21, 64);
    const base = data.subarray(0, N * DIM);
    const queries = data.subarray(N * DIM);
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'tail', dim: DIM, metric: 'l2', promotion: { max_buffer_vectors: 1000, max_buffer_age_ms: 3_600_000 } });
    // A build makes at most 4·√n lists: 126 over 1,000 rows, 179 over 2,000, 219 over 3,000.
    // Rows come in partitions of 1,000, sealed by size, folded by the automatic policy.
    const listsOnceFolded = async (rows: number) => {
      await vi.waitFor(() => expect(ds.stats()).toMatchObject({ partitions: 1, vector_count: rows, growing_vectors: 0, index_status: 'ready' }), {
        timeout: 20_000,
        interval: 20,
      });
      return ds.tuning().nlist;
    };
    const listsAfterFlush = async () => {
      await ds.flush();
      return ds.tuning().nlist;
    };
    await upsertInBatches(ds, data, DIM, 0, 1000, 500);
    const first = await listsAfterFlush();
    expect(first).toBeLessThanOrEqual(126);
    await upsertInBatches(ds, data, DIM, 1000, 1000, 500);
    expect(await listsOnceFolded(2000)).toBe(first);
    const second = await listsAfterFlush();
    expect(second).toBeGreaterThan(126);
    expect(second).toBeLessThanOrEqual(179);
    await upsertInBatches(ds, data, DIM, 2000, 1000, 500);
    expect(await listsOnceFolded(3000)).toBe(second);
    const lists = await listsAfterFlush();
    expect(lists).toBeGreaterThan(179);
    expect(lists).toBeLessThanOrEqual(219);
    // 500 rows more stay within 1.25 times the 3,000 trained on: extended, also at flush.
    await upsertInBatches(ds, data, DIM, 3000, 500, 500);
    expect(await listsAfterFlush()).toBe(lists);
    expect(ds.stats()).toMatchObject({ partitions: 1, vector_count: N });
    expect(await recallOf(ds, 'l2', base, queries, DIM, lists)).toBeGreaterThanOrEqual(0.99);
    expect(await recallOf(ds, 'l2', base, queries, DIM)).toBeGreaterThanOrEqual(0.9);
    for (const id of [0, 1999, 3001, 3499]) expect((await ds.search(row(base, DIM, id), { topK: 1 }))[0]).toMatchObject({ id, metadata: { id } });
    const before = await ds.searchBatch(queries, { topK: 10, includeMetadata: false });
    await engine.close();

    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('tail')!;
    expect(reopened.rebuiltSnapshots).toBe(0);
    expect(reopened.tuning().nlist).toBe(lists);
    expect(await reopened.searchBatch(queries, { topK: 10, includeMetadata: false })).toEqual(before);
    await again.close();
  });

  it('rows far from every list are not forced into them: the index is trained anew over all', async () => {
    const DIM = 16;
    const near = clustered(1000, DIM, 31);
    // The same shapes moved far away: a new topic the lists were not trained on.
    const far = clustered(900, DIM, 32).map((v) => v + 50);
    const data = new Float32Array([...near, ...far]);
    const engine = await Engine.open({});
    const ds = await engine.createDataset({ name: 'drift', dim: DIM, metric: 'l2', promotion: { max_buffer_vectors: 1000, max_buffer_age_ms: 3_600_000 } });
    await upsertInBatches(ds, data, DIM, 0, 1000, 1000);
    await ds.flush();
    const trained = ds.tuning().nlist;
    await upsertInBatches(ds, data, DIM, 1000, 900, 900);
    await ds.flush();
    expect(ds.stats()).toMatchObject({ partitions: 1, vector_count: 1900 });
    // 1,900 rows fit twice the 1,000 trained on: only the distance kept them from joining its lists.
    expect(ds.tuning().nlist).toBeGreaterThan(trained);
    const hits = await ds.searchBatch(data.subarray(1000 * DIM, 1100 * DIM), { topK: 1, includeMetadata: false });
    expect(hits.map((h) => h[0]!.id)).toEqual(Array.from({ length: 100 }, (_, i) => 1000 + i));
    await engine.close();
  });

  it('a one-bit index takes a tail without training, its default recall measured on all its rows', async () => {
    const DIM = 256;
    // 20,000 rows trained on, 4,000 more: within 1.25 times, extended at flush.
    const N = 24_000;
    const data = clustered(N + 40, DIM, 5);
    const base = data.subarray(0, N * DIM);
    const queries = data.subarray(N * DIM);
    const engine = await Engine.open({});
    const ds = await engine.createDataset({ name: 'bits', dim: DIM, metric: 'cosine', promotion: { max_buffer_vectors: 20_000, max_buffer_age_ms: 3_600_000 } });
    await upsertInBatches(ds, data, DIM, 0, N, 4000);
    await ds.flush();
    const st = ds.stats();
    expect(st).toMatchObject({ partitions: 1, vector_count: N, growing_vectors: 0 });
    // One bit a dimension: 32 bytes a row of codes, where SQ8 holds 256 (plus half-precision rows).
    expect(st.memory_bytes).toBeLessThan(N * (DIM * 2 + 200));
    const lists = ds.tuning().nlist;
    expect(lists).toBeLessThanOrEqual(Math.round(2 * Math.sqrt(20_000)));
    expect(await recallOf(ds, 'cosine', base, queries, DIM)).toBeGreaterThanOrEqual(0.95);
    expect(await recallOf(ds, 'cosine', base, queries, DIM, lists)).toBeGreaterThanOrEqual(0.99);
    const { receipt } = await ds.searchDetailed(row(queries, DIM, 0), { topK: 10 });
    expect(receipt.estimated_recall).toBeGreaterThanOrEqual(0.95);
    await engine.close();
  });

  it('a small tail waits beside the largest while writes come, and folds once the dataset is idle', async () => {
    const DIM = 16;
    const data = clustered(1030, DIM, 8);
    const engine = await Engine.open({});
    const ds = await engine.createDataset({ name: 'idle', dim: DIM, metric: 'cosine', promotion: { max_buffer_vectors: 1000, max_buffer_age_ms: 400 } });
    await upsertInBatches(ds, data, DIM, 0, 1000, 1000);
    await upsertInBatches(ds, data, DIM, 1000, 30, 30);
    // The 30 rows are sealed by age, a thirty-third of the largest: not due until idle.
    await vi.waitFor(() => expect(ds.stats()).toMatchObject({ partitions: 2, growing_vectors: 0 }), { timeout: 10_000, interval: 20 });
    await vi.waitFor(() => expect(ds.stats().partitions).toBe(1), { timeout: 10_000, interval: 50 });
    expect(ds.stats().vector_count).toBe(1030);
    for (const id of [3, 1012, 1029]) expect((await ds.search(row(data, DIM, id), { topK: 1 }))[0].id).toBe(id);
    await engine.close();
  });
});

describe('partitions swapped out under searches on a runner', () => {
  it('stay open for the searches planned before the swap, which all answer', async () => {
    const DIM = 16;
    const data = clustered(4000, DIM, 13);
    const pool = new ShardPool({ threads: 2, partitionsPerShard: 1 });
    const engine = await Engine.open({});
    try {
      const ds = await engine.createDataset({ name: 'swap', dim: DIM, metric: 'l2', promotion: { max_buffer_vectors: 1000, max_buffer_age_ms: 3_600_000 } });
      await upsertInBatches(ds, data, DIM, 0, 1000, 1000);
      await ds.flush();
      // Three more partitions sealed and folded while searches keep coming on the pool's threads,
      // each holding the handles of whatever partitions its plan saw.
      const searches: { id: number; hits: Promise<{ id: number }[]> }[] = [];
      const query = (id: number) => ds.search(row(data, DIM, id), { topK: 1 }, pool);
      for (let batch = 1; batch < 4; batch++) {
        let loading = true;
        const storm = (async () => {
          for (let i = 0; loading && i < 400; i++) {
            searches.push({ id: i % 1000, hits: query(i % 1000) });
            if (i % 16 === 15) await new Promise((r) => setImmediate(r));
          }
        })();
        await upsertInBatches(ds, data, DIM, batch * 1000, 1000, 1000);
        await ds.flush();
        loading = false;
        await storm;
      }
      const answers = await Promise.all(searches.map((s) => s.hits));
      expect(answers.map((hits) => hits[0]?.id)).toEqual(searches.map((s) => s.id));
      expect(ds.stats()).toMatchObject({ partitions: 1, vector_count: 4000 });
      for (const id of [5, 3999]) expect((await query(id))[0].id).toBe(id);
    } finally {
      await engine.close();
      await pool.close();
    }
  });
});
