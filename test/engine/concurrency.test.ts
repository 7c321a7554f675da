import { afterAll, describe, expect, it } from 'vitest';
import { Engine, ShardPool } from '../../dist/engine/index.js';
import { SearchBatcher } from '../../dist/engine/dataset/batcher.js';
import { plan } from '../../dist/engine/dataset/search.js';
import { clustered, row } from '../support/data.js';

const DIM = 32;

describe('concurrency', async () => {
  const engine = await Engine.open({});
  const pool = new ShardPool({ threads: 2, partitionsPerShard: 1 });
  afterAll(async () => {
    await pool.close();
    await engine.close();
  });

  it('worker threads search the one in-memory index, shards merged, same answers as in-thread', async () => {
    const ds = await engine.createDataset({
      name: 'pool', dim: DIM, metric: 'l2', indexType: 'hnsw',
      promotion: { max_buffer_vectors: 1500, max_buffer_age_ms: 3_600_000 },
    });
    const data = clustered(6000, DIM, 21);
    for (let s = 0; s < 6000; s += 1500) {
      await ds.upsert(Array.from({ length: 1500 }, (_, i) => s + i), data.subarray(s * DIM, (s + 1500) * DIM),
        Array.from({ length: 1500 }, (_, i) => ({ n: s + i })));
    }
    await ds.flush();
    expect(ds.stats().partitions).toBe(4);
    for (let q = 0; q < 20; q++) {
      const query = row(data, DIM, q * 97);
      const local = await ds.search(query, { topK: 10 });
      const { hits, receipt } = await ds.searchDetailed(query, { topK: 10 }, pool);
      expect(hits).toEqual(local);
      expect(hits[0].id).toBe(q * 97);
      // Four sealed shards searched; the empty growing partition is listed with strategy "none".
      expect(receipt.partitions.length).toBe(5);
      expect(receipt.partitions_searched).toBe(4);
    }
  });

  it('searches of one turn share native batches, each with its own options and answer', async () => {
    const ds = await engine.createDataset({ name: 'batched', dim: DIM, metric: 'l2', schema: [{ name: 'n', type: 'i64' }] });
    const data = clustered(3000, DIM, 5);
    await ds.upsert(Array.from({ length: 3000 }, (_, i) => i), data, Array.from({ length: 3000 }, (_, i) => ({ n: i % 7 })));
    await ds.flush();
    const single = new ShardPool({ threads: 2 });
    try {
      // 60 searches in one turn: same knobs batch together, others (top_k, nprobe, filters) apart.
      const asks = Array.from({ length: 60 }, (_, i) => ({
        query: row(data, DIM, i * 41),
        opts: { topK: 1 + (i % 3) * 5, ...(i % 4 === 1 ? { nprobe: 2 } : {}), ...(i % 5 === 2 ? { advancedFilters: [{ field: 'n', op: 'eq' as const, value: i % 7 }] } : {}) },
      }));
      const answers = await Promise.all(asks.map((a) => ds.searchDetailed(a.query, a.opts, single)));
      for (let i = 0; i < asks.length; i++) {
        const alone = await ds.searchDetailed(asks[i].query, asks[i].opts);
        expect(answers[i].hits, `search ${i}`).toEqual(alone.hits);
        expect(answers[i].hits.length).toBe(asks[i].opts.topK);
        expect(answers[i].receipt.partitions.map((p) => p.nprobe)).toEqual(alone.receipt.partitions.map((p) => p.nprobe));
      }
      // A bad query fails alone; the others of its turn answer.
      const mixed = await Promise.allSettled([ds.searchDetailed(row(data, DIM, 1), { topK: 3 }, single), ds.searchDetailed(new Float32Array(DIM + 1), { topK: 3 }, single), ds.searchDetailed(row(data, DIM, 2), { topK: 3 }, single)]);
      expect(mixed.map((m) => m.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      // Options the binding refuses before it starts (it throws, where a search rejects): the
      // batch's turn ran them in a setImmediate callback, and the throw ended the process.
      const batcher = new SearchBatcher(2);
      // The engine's own plan of this search (its state is private to the embedded API).
      const { handles, options } = plan((ds as unknown as { core: Parameters<typeof plan>[0] }).core, { topK: 3 });
      const refused = await Promise.allSettled([batcher.search(handles, row(data, DIM, 3), { ...options, nprobe: 2e9 }), batcher.search(handles, row(data, DIM, 4), options)]);
      expect(refused.map((m) => m.status)).toEqual(['rejected', 'fulfilled']);
      expect((refused[0] as PromiseRejectedResult).reason.message).toMatch(/out of range/);
    } finally {
      await single.close();
    }
  });

  it('searches keep answering while upserts, promotions and index builds run', async () => {
    const ds = await engine.createDataset({
      name: 'busy', dim: DIM, metric: 'cosine', indexType: 'sable',
      promotion: { max_buffer_vectors: 2000, max_buffer_age_ms: 3_600_000 },
    });
    const total = 16_000;
    const data = clustered(total, DIM, 33);
    await ds.upsert(Array.from({ length: 500 }, (_, i) => i), data.subarray(0, 500 * DIM));
    let written = 500;
    const writer = (async () => {
      for (let s = 500; s < total; s += 500) {
        await ds.upsert(Array.from({ length: 500 }, (_, i) => s + i), data.subarray(s * DIM, (s + 500) * DIM));
        written = s + 500;
      }
    })();
    let searches = 0;
    let sawBuilding = false;
    const readers = [0, 1, 2].map(async (r) => {
      while (written < total) {
        const id = Math.max(0, written - 1 - r * 7);
        const viaPool = r % 2 === 0;
        const q = row(data, DIM, id);
        const hits = viaPool ? (await ds.searchDetailed(q, { topK: 5 }, pool)).hits : await ds.search(q, { topK: 5 });
        expect(hits.length).toBe(5);
        // Acknowledged rows are searchable at once, wherever they are in their lifecycle.
        expect(hits[0].score).toBeCloseTo(0, 4);
        if (ds.stats().index_status === 'building') sawBuilding = true;
        searches++;
        await new Promise((res) => setImmediate(res));
      }
    });
    await Promise.all([writer, ...readers]);
    await ds.flush();
    expect(searches).toBeGreaterThan(50);
    expect(sawBuilding).toBe(true);
    expect(ds.stats()).toMatchObject({ vector_count: total, index_status: 'ready' });
    const batch = await ds.searchBatch(data.subarray(0, 200 * DIM), { topK: 1, threads: 2, includeMetadata: false });
    expect(batch.filter((h, i) => h[0].id === i).length).toBeGreaterThanOrEqual(198);
  });
});
