import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { clustered, row } from '../support/data.js';

const DIM = 48;

// A batch scans an unindexed partition once for all its queries (Segment::search_exact_batch):
// the answers must be those of one search at a time, ids and scores, deleted rows never returned.
describe('batched exact scans', async () => {
  const engine = await Engine.open({});
  afterAll(() => engine.close());

  for (const metric of ['cosine', 'l2', 'ip'] as const) {
    it(`${metric}: a batch over a growing partition (with deletes) and an indexed one answers as single searches`, async () => {
      const ds = await engine.createDataset({ name: `batch-${metric}`, dim: DIM, metric, promotion: { max_buffer_vectors: 1000, max_buffer_age_ms: 3_600_000 } });
      const data = clustered(1700, DIM, 5);
      const meta = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ g: (from + i) % 3 }));
      await ds.upsert(Array.from({ length: 1000 }, (_, i) => i), data.subarray(0, 1000 * DIM), meta(0, 1000));
      await ds.flush();
      // 700 more rows stay in the growing partition, which has no index; some of them deleted.
      await ds.upsert(Array.from({ length: 700 }, (_, i) => 1000 + i), data.subarray(1000 * DIM), meta(1000, 700));
      const deleted = Array.from({ length: 70 }, (_, i) => 1000 + i * 10);
      await ds.delete(deleted);
      expect(ds.stats().partitions).toBe(2);
      // 5 queries take the narrow k-NN panels, 37 the wide ones.
      for (const nq of [5, 37]) {
        const queries = new Float32Array(nq * DIM);
        for (let q = 0; q < nq; q++) queries.set(row(data, DIM, (q * 131) % 1700), q * DIM);
        for (const threads of [1, 3]) {
          const batch = await ds.searchBatch(queries, { topK: 10, threads, includeMetadata: false });
          for (let q = 0; q < nq; q++) {
            const single = await ds.search(queries.subarray(q * DIM, (q + 1) * DIM), { topK: 10, includeMetadata: false });
            expect(batch[q]).toEqual(single);
            for (const h of batch[q]) expect(deleted).not.toContain(h.id);
          }
        }
        // One filter for the whole batch: evaluated once per partition, rows it refuses never returned.
        const filter = { topK: 10, advancedFilters: [{ field: 'g', op: 'eq' as const, value: 1 }], includeMetadata: false };
        const filtered = await ds.searchBatch(queries, filter);
        for (let q = 0; q < nq; q++) {
          expect(filtered[q]).toEqual(await ds.search(queries.subarray(q * DIM, (q + 1) * DIM), filter));
          expect(filtered[q].length).toBe(10);
          for (const h of filtered[q]) expect(h.id % 3).toBe(1);
        }
        const exact = await ds.searchBatch(queries, { topK: 5, exact: true, includeMetadata: false });
        for (let q = 0; q < nq; q++) {
          expect(exact[q]).toEqual(await ds.search(queries.subarray(q * DIM, (q + 1) * DIM), { topK: 5, exact: true, includeMetadata: false }));
        }
      }
    });
  }
});
