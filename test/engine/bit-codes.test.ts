// The sable index's one-bit codes (native/core/codes/bit_codes.h): segments of 5,000 rows and more
// of 256 dimensions and more keep a bit per rotated coordinate instead of SQ8 bytes. Recall at
// the default setting against the exact oracle and with every list, filters, the receipt's estimated recall, the
// memory they save, and a snapshot that reopens with the same answers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { clustered, exactTopK, recall, row, type Metric } from '../support/data.js';

const N = 20_000;
const BITS_MIN_ROWS = 5_000;
const DIM = 256;
const NQ = 40;
const ONE_PARTITION = { max_buffer_vectors: 1_000_000, max_buffer_age_ms: 3_600_000 };

describe('one-bit codes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-bits-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const data = clustered(N + NQ, DIM, 17);
  const base = data.subarray(0, N * DIM);
  const queries = data.subarray(N * DIM);
  const ids = Array.from({ length: N }, (_, i) => i);
  const meta = ids.map((i) => ({ bucket: i % 10 }));

  for (const metric of ['cosine', 'l2', 'ip'] as Metric[]) {
    it(`${metric}: recall@10 >= 0.95 at the default, the receipt's estimate near it, filters too`, async () => {
      const engine = await Engine.open({});
      const ds = await engine.createDataset({ name: 'bits', dim: DIM, metric, promotion: ONE_PARTITION });
      await ds.upsert(ids, base, meta);
      await ds.flush();
      const results = await ds.searchBatch(queries, { topK: 10, includeMetadata: false });
      const truth = Array.from({ length: NQ }, (_, q) => exactTopK(metric, base, DIM, row(queries, DIM, q), 10));
      const r = results.reduce((s, hits, q) => s + recall(hits.map((h) => h.id), truth[q]), 0) / NQ;
      expect(r).toBeGreaterThanOrEqual(0.95);
      const { hits, receipt } = await ds.searchDetailed(row(queries, DIM, 0), { topK: 10 });
      expect(hits.map((h) => h.id)).toEqual(results[0].map((h) => h.id));
      expect(receipt.strategy).toBe('index');
      expect(receipt.estimated_recall).toBeGreaterThanOrEqual(0.95);
      expect(receipt.estimated_recall).toBeLessThanOrEqual(1);
      expect(receipt.partitions[0].estimated_recall).toBe(receipt.estimated_recall);
      // Fewer lists, fewer estimated: a smaller estimate, never above the default's.
      const narrow = await ds.searchDetailed(row(queries, DIM, 0), { topK: 10, nprobe: 1 });
      expect(narrow.receipt.estimated_recall).toBeLessThan(receipt.estimated_recall!);
      // Asking for every list asks for every true neighbour: the bounds widen past the default
      // nprobe, so the estimates prune none (at 1.9 bounds everywhere: 0.99 for cosine and l2).
      const exact = await ds.searchBatch(queries, { topK: 10, exact: true, includeMetadata: false });
      const every = await ds.searchBatch(queries, { topK: 10, nprobe: 100_000, includeMetadata: false });
      const full = every.reduce((s, hits, q) => s + recall(hits.map((h) => h.id), exact[q].map((h) => h.id)), 0) / NQ;
      expect(full).toBeGreaterThanOrEqual(0.9975);
      // Scores are exact (re-scored from the rows), so a row's own score is its distance to itself.
      const [self] = await ds.search(row(base, DIM, 42), { topK: 1 });
      expect(self.id).toBe(42);
      // A filter on a tenth of the rows.
      const filtered = await ds.searchBatch(queries, { topK: 10, filters: { bucket: 3 }, includeMetadata: false });
      const allowed = base.filter((_, i) => Math.floor(i / DIM) % 10 === 3);
      const allowedIds = ids.filter((i) => i % 10 === 3);
      const fr = filtered.reduce((s, hs, q) => {
        const want = exactTopK(metric, allowed, DIM, row(queries, DIM, q), 10).map((i) => allowedIds[i]);
        expect(hs.every((h) => h.id % 10 === 3)).toBe(true);
        return s + recall(hs.map((h) => h.id), want);
      }, 0) / NQ;
      expect(fr).toBeGreaterThanOrEqual(0.95);
      await engine.close();
    });
  }

  it('takes a bit a dimension where SQ8 takes a byte, and reopens from its snapshot unchanged', async () => {
    const engine = await Engine.open({ path: dir });
    const bits = await engine.createDataset({ name: 'bits', dim: DIM, metric: 'cosine', promotion: ONE_PARTITION });
    // One row fewer than the 5,000 from which segments take bit codes.
    const sq8 = await engine.createDataset({ name: 'sq8', dim: DIM, metric: 'cosine', promotion: ONE_PARTITION });
    await bits.upsert(ids.slice(0, BITS_MIN_ROWS), base.subarray(0, BITS_MIN_ROWS * DIM));
    await sq8.upsert(ids.slice(1, BITS_MIN_ROWS), base.subarray(DIM, BITS_MIN_ROWS * DIM));
    for (const ds of [bits, sq8]) await ds.flush();
    // SQ8: 256 bytes a row; bits: 32 bytes and four floats.
    expect(sq8.stats().memory_bytes - bits.stats().memory_bytes).toBeGreaterThan(BITS_MIN_ROWS * 200);
    const before = await bits.searchBatch(queries, { topK: 10, includeMetadata: false });
    await engine.close();
    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('bits')!;
    expect(reopened.rebuiltSnapshots).toBe(0);
    expect(await reopened.searchBatch(queries, { topK: 10, includeMetadata: false })).toEqual(before);
    await again.close();
  });
});
