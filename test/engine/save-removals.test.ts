import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { native } from '../../dist/engine/native.js';
import { Rng } from '../../dist/testkit/rng.js';

// A snapshot's save writes and syncs the partition's file without the lock removals take, so a
// delete (on the HTTP thread) that meets a partition being saved returns at once instead of
// holding the event loop until the file is written.
describe('removals during a snapshot save', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-save-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a removal returns long before the save of its partition ends, and the save keeps the rows it began with', async () => {
    const dim = 256, rows = 200_000;
    const rng = new Rng(3);
    const h = native.segmentCreate(dim, 'l2', rows);
    try {
      const vectors = Float32Array.from({ length: rows * dim }, () => rng.gauss());
      native.segmentAppend(h, Float64Array.from({ length: rows }, (_, i) => i), vectors);
      native.segmentSeal(h);
      const t0 = performance.now();
      let saveMs = 0;
      const saved = native.segmentSave(h, join(dir, 'p.seg')).then((sum) => ((saveMs = performance.now() - t0), sum));
      // The save starts on a background thread: give it a moment to take its locks.
      await new Promise((r) => setTimeout(r, 5));
      const r0 = performance.now();
      const removed = native.segmentRemove(h, Float64Array.of(1, 2, 3));
      const removeMs = performance.now() - r0;
      const checksum = await saved;
      expect(removed).toBe(3);
      expect(saveMs).toBeGreaterThan(20);
      expect(removeMs).toBeLessThan(saveMs / 4);
      const loaded = await native.segmentLoad(join(dir, 'p.seg'), checksum);
      try {
        expect(native.segmentStats(loaded).rows).toBe(rows);
      } finally {
        native.segmentRelease(loaded);
      }
    } finally {
      native.segmentRelease(h);
    }
  });
});
