import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { BULK_SLICE_BYTES, TRANSACTION_SLICE_BYTES } from '../../dist/engine/dataset/write-groups.js';
import { lastTxn } from '../support/lmdb-txn.js';

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

  it('commits a bulk batch in slices of BULK_SLICE_BYTES: far fewer transactions, the same rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-bulk-slices-'));
    const engine = await Engine.open({ path: dir });
    try {
      const dim = 768;
      const rows = Math.ceil((1.5 * BULK_SLICE_BYTES) / (dim * 4));
      const vectors = new Float32Array(rows * dim);
      for (let r = 0; r < rows; r++) vectors.fill(r + 1, r * dim, (r + 1) * dim);
      const commitsOf = async (name: string, bulk: boolean) => {
        const ds = await engine.createDataset({ name, dim, metric: 'l2', promotion: { max_buffer_vectors: 1_000_000 } });
        const before = lastTxn(dir);
        await ds.upsert(Float64Array.from({ length: rows }, (_, r) => r), vectors, undefined, { bulk });
        const commits = lastTxn(dir) - before;
        for (const r of [0, rows >> 1, rows - 1]) expect(ds.getVector(r)).toEqual(vectors.subarray(r * dim, (r + 1) * dim));
        expect(ds.stats().vector_count).toBe(rows);
        return commits;
      };
      const sliced = await commitsOf('sliced', false);
      const bulk = await commitsOf('bulk', true);
      expect(sliced).toBeGreaterThanOrEqual(Math.floor((rows * dim * 4) / TRANSACTION_SLICE_BYTES));
      expect(bulk).toBeLessThanOrEqual(3);
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
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
