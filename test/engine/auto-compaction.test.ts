// Automatic compaction: under steady small writes the partitions stay few, replaced and deleted
// rows leave memory and disk, and closing or destroying a dataset waits for (or skips) a merge
// instead of leaving its files behind.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { clustered, row } from '../support/data.js';

const DIM = 16;
const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sable-compact-'));
  dirs.push(d);
  return d;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const SMALL = { max_buffer_vectors: 50, max_buffer_age_ms: 3_600_000 };
const snapshotsIn = (dir: string) => readdirSync(join(dir, 'segments')).filter((f) => f.endsWith('.seg'));

async function writeInSmallBatches(ds: Awaited<ReturnType<Engine['createDataset']>>, data: Float32Array, batches: number) {
  for (let b = 0; b < batches; b++) {
    const ids = Array.from({ length: 50 }, (_, i) => b * 50 + i);
    await ds.upsert(ids, data.subarray(b * 50 * DIM, (b + 1) * 50 * DIM), ids.map((n) => ({ n })));
  }
}

describe('automatic compaction', () => {
  it('keeps the partitions of many small promotions few, every row still found, durably', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'steady', dim: DIM, metric: 'l2', promotion: SMALL });
    const data = clustered(3000, DIM, 5);
    await writeInSmallBatches(ds, data, 60);
    await ds.flush();
    // 60 promotions of 50 rows: tiers of 8 merge into partitions of 400, eight of those into one.
    await vi.waitFor(() => expect(ds.stats().partitions).toBeLessThanOrEqual(12), { timeout: 20_000, interval: 50 });
    expect(ds.stats().vector_count).toBe(3000);
    for (const id of [0, 777, 2999]) expect((await ds.search(row(data, DIM, id), { topK: 1 }))[0].id).toBe(id);
    await engine.close();

    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('steady')!;
    expect(reopened.rebuiltSnapshots).toBe(0);
    expect(reopened.stats().vector_count).toBe(3000);
    expect(reopened.getMetadata(1234)).toEqual({ n: 1234 });
    // One snapshot file per sealed partition: merged ones were removed.
    expect(snapshotsIn(dir).length).toBe(reopened.stats().partitions);
    await again.close();
  });

  it('rewrites a partition once a tenth of its rows are deleted or replaced, and they stay gone', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'churn', dim: DIM, metric: 'cosine', promotion: { max_buffer_vectors: 10_000, max_buffer_age_ms: 3_600_000 } });
    const data = clustered(2000, DIM, 9);
    const ids = Array.from({ length: 2000 }, (_, i) => i);
    await ds.upsert(ids, data, ids.map((n) => ({ n })));
    await ds.flush();
    await ds.delete(ids.slice(0, 150));
    expect(ds.stats().deleted_count).toBe(150);
    // 150 of 2000 dead: below the share, nothing merges.
    await new Promise((r) => setTimeout(r, 300));
    expect(ds.stats().deleted_count).toBe(150);
    await ds.upsert(ids.slice(300, 400), data.subarray(0, 100 * DIM), ids.slice(300, 400).map((n) => ({ n: -n })));
    await vi.waitFor(() => expect(ds.stats().deleted_count).toBe(0), { timeout: 20_000, interval: 50 });
    expect(ds.stats().vector_count).toBe(1850);
    await engine.close();

    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('churn')!;
    expect(reopened.stats().vector_count).toBe(1850);
    expect(reopened.getMetadata(5)).toBeUndefined();
    expect(reopened.getMetadata(350)).toEqual({ n: -350 });
    const hits = await reopened.search(row(data, DIM, 0), { topK: 5 });
    expect(hits.map((h) => h.id)).toContain(300);
    expect(hits.map((h) => h.id).every((id) => id >= 150)).toBe(true);
    await again.close();
  });

  // A partition rewritten without its dead rows keeps its lists and codes: at a small nprobe,
  // where answers depend on which rows share a list, they are the same before and after the
  // rewrite (a new build trains other lists and answers differently), and nothing is built.
  for (const { indexType, n, dim, what } of [
    { indexType: 'sable', n: 4000, dim: 32, what: 'SQ8 codes' },
    { indexType: 'sable', n: 20_000, dim: 256, what: 'bit codes' },
    { indexType: 'ivf', n: 4000, dim: 32, what: 'SQ8 codes' },
  ] as const) {
    it(`rewrites a ${indexType} partition (${what}) without its dead rows by copying its index`, async () => {
      const dir = freshDir();
      const engine = await Engine.open({ path: dir });
      const ds = await engine.createDataset({ name: 'copy', dim, metric: 'cosine', indexType, promotion: { max_buffer_vectors: 100_000, max_buffer_age_ms: 3_600_000 } });
      const data = clustered(n, dim, 21, 64);
      const ids = Array.from({ length: n }, (_, i) => i);
      await ds.upsert(ids, data, ids.map((i) => ({ tag: i % 3 === 0 ? 'a' : 'b' })));
      await ds.flush();
      const queries = [7, 301, 1999, 3333];
      const ask = (nprobe: number, filters?: { tag: string }) =>
        Promise.all(queries.map((q) => ds.search(row(data, dim, q), { topK: 10, nprobe, filters })));
      // Hold builds: a rewrite that needed one would never finish.
      ds.holdBuilds();
      const dead = ids.filter((i) => i % 4 === 1);
      await ds.delete(dead);
      // With a quarter of the rows tombstoned a search probes 1 / 0.75 times the lists asked.
      const before = await ask(2);
      await vi.waitFor(() => expect(ds.stats().deleted_count).toBe(0), { timeout: 20_000, interval: 50 });
      const after = await ask(3);
      expect(after).toEqual(before);
      const deadSet = new Set(dead);
      const filtered = await ask(2, { tag: 'b' });
      for (const hits of [...after, ...filtered]) {
        expect(hits.length).toBe(10);
        expect(hits.some((h) => deadSet.has(h.id))).toBe(false);
      }
      expect(ds.stats().vector_count).toBe(n - dead.length);
      await engine.close();

      const again = await Engine.open({ path: dir });
      const reopened = again.getDataset('copy')!;
      expect(reopened.rebuiltSnapshots).toBe(0);
      const asked = await Promise.all(queries.map((q) => reopened.search(row(data, dim, q), { topK: 10, nprobe: 3 })));
      expect(asked).toEqual(after);
      await again.close();
    });
  }

  it('rewrites an hnsw partition, whose graph cannot drop rows, with a new build', async () => {
    const engine = await Engine.open({});
    const ds = await engine.createDataset({ name: 'graph', dim: DIM, metric: 'l2', indexType: 'hnsw', promotion: { max_buffer_vectors: 10_000, max_buffer_age_ms: 3_600_000 } });
    const data = clustered(1000, DIM, 4);
    const ids = Array.from({ length: 1000 }, (_, i) => i);
    await ds.upsert(ids, data);
    await ds.flush();
    await ds.delete(ids.filter((i) => i % 4 === 1));
    await vi.waitFor(() => expect(ds.stats().deleted_count).toBe(0), { timeout: 20_000, interval: 50 });
    expect(ds.stats().index_status).toBe('ready');
    for (const id of [0, 2, 999]) expect((await ds.search(row(data, DIM, id), { topK: 1 }))[0].id).toBe(id);
    expect((await ds.search(row(data, DIM, 1), { topK: 5 })).some((h) => h.id % 4 === 1)).toBe(false);
    await engine.close();
  });

  it('a partition whose rows were all deleted is dropped, not kept empty', async () => {
    const engine = await Engine.open({});
    // HNSW keeps its two partitions (indexes with lists fold them into one).
    const ds = await engine.createDataset({ name: 'gone', dim: DIM, metric: 'l2', indexType: 'hnsw', promotion: SMALL });
    const data = clustered(100, DIM, 2);
    await writeInSmallBatches(ds, data, 2);
    await ds.flush();
    expect(ds.stats().partitions).toBe(2);
    await ds.delete(Array.from({ length: 50 }, (_, i) => i));
    await vi.waitFor(() => expect(ds.stats().partitions).toBe(1), { timeout: 20_000, interval: 50 });
    expect(ds.stats().vector_count).toBe(50);
    expect(ds.stats().deleted_count).toBe(0);
    await engine.close();
  });

  it('destroying a dataset while a merge is under way leaves none of its files', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'doomed', dim: DIM, metric: 'l2', indexType: 'hnsw', promotion: SMALL });
    await writeInSmallBatches(ds, clustered(100, DIM, 7), 2);
    await ds.flush();
    // The merge the deletes start (both partitions a fifth dead: merged into one) waits for its
    // index build, held: it is under way when destroy comes.
    ds.holdBuilds();
    await ds.delete(Array.from({ length: 40 }, (_, i) => (i < 20 ? i : 30 + i)));
    await new Promise((r) => setTimeout(r, 100));
    expect(ds.stats().deleted_count).toBe(40);
    await engine.dropDataset('doomed');
    expect(snapshotsIn(dir)).toEqual([]);
    await engine.close();
    const again = await Engine.open({ path: dir });
    expect(again.listDatasets()).toEqual([]);
    await again.close();
  });
});
