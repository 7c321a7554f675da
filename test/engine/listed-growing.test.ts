import { afterAll, describe, expect, it } from 'vitest';
import { Engine, ShardPool } from '../../dist/engine/index.js';
import { clustered, row } from '../support/data.js';

// A growing partition beside an indexed one borrows its lists (coarse_lists.h): its searches scan
// the rows of the lists nearest the query instead of every row, with recall near the exact scan's.
const DIM = 48;
const SEALED = 20_000;
const FRESH = 8_000;

describe('a growing partition searched through an indexed partition\'s lists', async () => {
  const engine = await Engine.open({});
  const pool = new ShardPool({ threads: 2 });
  afterAll(async () => {
    await pool.close();
    await engine.close();
  });
  const ds = await engine.createDataset({
    name: 'listed', dim: DIM, metric: 'cosine', indexType: 'sable', schema: [{ name: 'bucket', type: 'i64' }],
    promotion: { max_buffer_vectors: 1_000_000, max_buffer_age_ms: 3_600_000 },
  });
  const data = clustered(SEALED + FRESH, DIM, 71, 64);
  const bucket = (i: number) => i % 5;
  const put = (from: number, to: number) =>
    ds.upsert(Array.from({ length: to - from }, (_, i) => from + i), data.subarray(from * DIM, to * DIM),
      Array.from({ length: to - from }, (_, i) => ({ bucket: bucket(from + i) })));
  await put(0, SEALED);
  await ds.flush();
  for (let s = SEALED; s < SEALED + FRESH; s += 1000) await put(s, s + 1000);

  it('scans a few lists of the fresh rows, finds each fresh row itself first, recall@10 >= 0.9', async () => {
    expect(ds.stats().partitions).toBe(2);
    // Searches assign the fresh rows to lists 1,024 at a time (CoarseLists::kAssignChunk); rows
    // not yet assigned are scanned exactly meanwhile.
    const scanned: number[] = [];
    for (let q = 0; q < 9; q++) {
      const { hits, receipt } = await ds.searchDetailed(row(data, DIM, SEALED + q), { topK: 10 }, pool);
      expect(hits[0].id).toBe(SEALED + q);
      scanned.push(receipt.partitions.find((p) => p.rows === FRESH)!.candidates_scored);
    }
    expect(scanned[0]).toBeGreaterThan(FRESH - 1024);
    expect(scanned[8]).toBeLessThan(FRESH / 3);
    const nlist = ds.tuning().nlist;
    let found = 0;
    for (let q = 0; q < 100; q++) {
      const id = SEALED + q * 79;
      const query = row(data, DIM, id);
      const { hits, receipt } = await ds.searchDetailed(query, { topK: 10 }, pool);
      expect(hits[0].id, `query ${q}`).toBe(id);
      const growing = receipt.partitions.find((p) => p.rows === FRESH)!;
      expect(growing.strategy).toBe('index');
      // The lists' rows, far from the 8,000 rows of an exact scan. The indexed partition's
      // ranking of the query stands in for ranking the centroids again (list_rankings.h): what
      // was scored is fewer than the centroids alone (566 + the lists' rows without it).
      expect(growing.candidates_scored).toBeLessThan(FRESH / 3);
      expect(growing.candidates_scored).toBeLessThan(nlist);
      const exact = (await ds.searchDetailed(query, { topK: 10, exact: true }, pool)).hits.map((h) => h.id);
      const got = new Set(hits.map((h) => h.id));
      found += exact.filter((id) => got.has(id)).length;
    }
    console.log(`listed growing partition: recall@10 ${(found / 1000).toFixed(3)} against the exact search, ${scanned[8]} of ${FRESH} fresh rows scored`);
    expect(found / 1000).toBeGreaterThanOrEqual(0.9);
  });

  it('keeps a filter exact about what passes, widening its lists to keep recall', async () => {
    let found = 0, total = 0;
    for (let q = 0; q < 50; q++) {
      const query = row(data, DIM, SEALED + 3 + q * 151);
      const opts = { topK: 10, advancedFilters: [{ field: 'bucket', op: 'eq' as const, value: 2 }] };
      const { hits } = await ds.searchDetailed(query, opts, pool);
      const exact = (await ds.searchDetailed(query, { ...opts, exact: true }, pool)).hits.map((h) => h.id);
      expect(hits.every((h) => bucket(h.id) === 2)).toBe(true);
      expect(hits.length).toBe(10);
      const got = new Set(hits.map((h) => h.id));
      found += exact.filter((id) => got.has(id)).length;
      total += exact.length;
    }
    console.log(`listed growing partition, filter passing 20 %: recall@10 ${(found / total).toFixed(3)}`);
    expect(found / total).toBeGreaterThanOrEqual(0.9);
  });

  it('searches a deleted fresh row no more, and an exact search still scans every row', async () => {
    const id = SEALED + 5;
    await ds.delete([id]);
    const { hits } = await ds.searchDetailed(row(data, DIM, id), { topK: 5 }, pool);
    expect(hits.map((h) => h.id)).not.toContain(id);
    const { receipt } = await ds.searchDetailed(row(data, DIM, id), { topK: 5, exact: true }, pool);
    expect(receipt.partitions.every((p) => p.strategy === 'exact')).toBe(true);
  });

  it('drops the borrowed lists once the partition has its own index', async () => {
    await ds.flush();
    const { hits, receipt } = await ds.searchDetailed(row(data, DIM, SEALED + 7), { topK: 5 }, pool);
    expect(hits[0].id).toBe(SEALED + 7);
    expect(receipt.partitions.filter((p) => p.rows > 0).every((p) => p.strategy === 'index')).toBe(true);
  });
});
