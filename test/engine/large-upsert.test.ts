import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { TRANSACTION_SLICE_BYTES } from '../../dist/engine/dataset/write-groups.js';

describe('an upsert larger than one transaction slice', () => {
  it('stores every row with its own metadata across the slices', async () => {
    const engine = await Engine.open({});
    try {
      const dim = 64;
      const text = 'x'.repeat(300);
      // Enough rows for several slices, and a slice boundary that metadata bytes move.
      const rows = Math.ceil((3.5 * TRANSACTION_SLICE_BYTES) / (dim * 4 + text.length));
      const ds = await engine.createDataset({ name: 'sliced', dim, metric: 'l2', promotion: { max_buffer_vectors: 1_000_000 } });
      const vectors = new Float32Array(rows * dim);
      for (let r = 0; r < rows; r++) vectors.fill(r, r * dim, (r + 1) * dim);
      const ids = Array.from({ length: rows }, (_, r) => r);
      const answer = await ds.upsert(ids, vectors, ids.map((r) => ({ row: r, text })));
      expect(answer.upserted).toBe(rows);
      expect(ds.stats().vector_count).toBe(rows);
      for (let r = 0; r < rows; r += 997) {
        const [hit] = await ds.search(new Float32Array(dim).fill(r), { topK: 1 });
        expect(hit).toMatchObject({ id: r, score: 0, metadata: { row: r, text } });
      }
    } finally {
      await engine.close();
    }
  });

  // LMDB keeps every page a transaction dirtied for the store's lifetime: one transaction of
  // all these rows held about 3.3x their bytes, slices hold under 1x (rows, index and all).
  it.runIf(process.platform === 'linux')('leaves anonymous memory below the bytes of the rows it loaded', () => {
    const rows = 40_000;
    const out = execFileSync(process.execPath, ['--expose-gc', join(__dirname, '..', 'support', 'large-upsert-child.mjs'), String(rows)], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const { grownMiB, count } = JSON.parse(out.trim().split('\n').at(-1)!);
    expect(count).toBe(rows);
    const valueMiB = (rows * 384 * 4) / 2 ** 20;
    expect(grownMiB).toBeLessThan(valueMiB);
  }, 90_000);
});
