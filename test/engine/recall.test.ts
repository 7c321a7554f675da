import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { clustered, exactTopK, recall, row, type Metric } from '../support/data.js';

const N = 6000;
const DIM = 48;
const NQ = 60;

describe('recall of every index type against the exact oracle', async () => {
  const engine = await Engine.open({});
  afterAll(() => engine.close());
  const data = clustered(N + NQ, DIM, 11);
  const base = data.subarray(0, N * DIM);
  const queries = data.subarray(N * DIM);
  const ids = Array.from({ length: N }, (_, i) => i);

  for (const metric of ['cosine', 'l2', 'ip'] as Metric[]) {
    const truth = Array.from({ length: NQ }, (_, q) => exactTopK(metric, base, DIM, row(queries, DIM, q), 10));
    for (const indexType of ['flat', 'ivf', 'hnsw', 'sable'] as const) {
      it(`${indexType} / ${metric}: recall@10 >= 0.95`, async () => {
        const ds = await engine.createDataset({
          name: `${indexType}-${metric}`, dim: DIM, metric, indexType,
          promotion: { max_buffer_vectors: 1_000_000, max_buffer_age_ms: 3_600_000 },
        });
        await ds.upsert(ids, base);
        await ds.flush();
        const stats = ds.stats();
        expect(stats.index_status).toBe('ready');
        expect(stats.vector_count).toBe(N);
        const results = await ds.searchBatch(queries, { topK: 10, includeMetadata: false });
        const r = results.reduce((s, hits, q) => s + recall(hits.map((h) => h.id), truth[q]), 0) / NQ;
        if (indexType === 'flat') expect(r).toBe(1);
        expect(r).toBeGreaterThanOrEqual(0.95);
        // Scores ascend and mean what the REST API says.
        for (const hits of results) for (let i = 1; i < hits.length; i++) expect(hits[i].score).toBeGreaterThanOrEqual(hits[i - 1].score);
        const { receipt } = await ds.searchDetailed(row(queries, DIM, 0), { topK: 10 });
        expect(receipt.strategy).toBe(indexType === 'flat' ? 'exact' : 'index');
        expect(receipt.isa).toBe(engine.isa);
        expect(receipt.candidates_scored).toBeGreaterThan(0);
        if (indexType !== 'flat') expect(receipt.candidates_scored).toBeLessThan(N);
        await engine.dropDataset(ds.name);
      });
    }
  }

  it('a cosine sable segment keeps its rows in half precision, an l2 one in float32, and both rebuild as hnsw', async () => {
    const truth = Array.from({ length: NQ }, (_, q) => exactTopK('cosine', base, DIM, row(queries, DIM, q), 10));
    const sizes: Record<string, number> = {};
    for (const metric of ['cosine', 'l2'] as Metric[]) {
      const ds = await engine.createDataset({
        name: `precision-${metric}`, dim: DIM, metric,
        promotion: { max_buffer_vectors: 1_000_000, max_buffer_age_ms: 3_600_000 },
      });
      await ds.upsert(ids, base);
      await ds.flush();
      sizes[metric] = ds.stats().memory_bytes;
      // Stored vectors stay exact: they come from LMDB, not the index.
      expect(ds.getVector(5)).toEqual(row(base, DIM, 5));
      // A row's own distance is 0 (never below) even when its halves are rounded.
      const [self] = await ds.search(row(base, DIM, 5), { topK: 1 });
      expect(self.id).toBe(5);
      expect(self.score).toBeGreaterThanOrEqual(-1e-7);
      expect(self.score).toBeLessThan(1e-6);
      if (metric === 'cosine') {
        await ds.setIndexType('hnsw', { m: 16, ef_construction: 100 });
        expect(ds.stats()).toMatchObject({ index_type: 'hnsw', index_status: 'ready' });
        const results = await ds.searchBatch(queries, { topK: 10, includeMetadata: false });
        const r = results.reduce((acc, hits, q) => acc + recall(hits.map((h) => h.id), truth[q]), 0) / NQ;
        expect(r).toBeGreaterThanOrEqual(0.95);
        sizes.rebuilt = ds.stats().memory_bytes;
      }
      await engine.dropDataset(ds.name);
    }
    // Rows are N * DIM * 4 bytes in float32, half that in half precision.
    expect(sizes.l2 - sizes.cosine).toBeGreaterThan(0.4 * N * DIM * 4);
    expect(sizes.rebuilt).toBeGreaterThan(N * DIM * 4);
    // L2 rows that half precision holds exactly (small integers, like pixels) are kept in it too,
    // with exact distances: a row's own distance stays 0.
    const pixels = Float32Array.from(base, (v) => Math.round(v * 40) + 128);
    const px = await engine.createDataset({ name: 'pixels', dim: DIM, metric: 'l2', promotion: { max_buffer_vectors: 1_000_000, max_buffer_age_ms: 3_600_000 } });
    await px.upsert(ids, pixels);
    await px.flush();
    expect(px.stats().memory_bytes).toBeLessThan(sizes.l2 - 0.4 * N * DIM * 4);
    const [own] = await px.search(row(pixels, DIM, 17), { topK: 1 });
    expect(own).toMatchObject({ id: 17, score: 0 });
    await engine.dropDataset('pixels');
  });

  it('cosine scores: identical vector 0, orthogonal about 1', async () => {
    const ds = await engine.createDataset({ name: 'cos-meaning', dim: 2, metric: 'cosine' });
    await ds.upsert([1, 2], Float32Array.of(1, 0, 0, 3));
    const hits = await ds.search(Float32Array.of(2, 0), { topK: 2 });
    expect(hits[0]).toMatchObject({ id: 1 });
    expect(hits[0].score).toBeCloseTo(0, 6);
    expect(hits[1].score).toBeCloseTo(1, 6);
  });
});
