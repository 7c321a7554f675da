import { afterAll, describe, expect, it } from 'vitest';
import { Engine, SableError } from '../../dist/engine/index.js';
import { native } from '../../dist/engine/native.js';

describe('errors carry codes and nothing stored is lost', async () => {
  const engine = await Engine.open({});
  afterAll(() => engine.close());
  const ds = await engine.createDataset({ name: 'e', dim: 3 });
  await ds.upsert([1], Float32Array.of(1, 2, 3), [{ a: 1 }]);

  const bad: [string, () => Promise<unknown>][] = [
    ['wrong vector length', () => ds.upsert([2], Float32Array.of(1, 2))],
    ['non-finite value', () => ds.upsert([2], Float32Array.of(1, NaN, 3))],
    ['unsafe id', () => ds.upsert([2 ** 60], Float32Array.of(1, 2, 3))],
    ['nested metadata', () => ds.upsert([2], Float32Array.of(1, 2, 3), [{ a: { b: 1 } } as never])],
    ['metadata count', () => ds.upsert([2], Float32Array.of(1, 2, 3), [])],
    ['query dimension', () => ds.search(Float32Array.of(1, 2))],
    ['top k', () => ds.search(Float32Array.of(1, 2, 3), { topK: 0 })],
    ['filter operator', () => ds.search(Float32Array.of(1, 2, 3), { advancedFilters: [{ field: 'a', op: 'like' as never, value: 1 }] })],
    ['bad metric', () => engine.createDataset({ name: 'x', dim: 3, metric: 'hamming' as never })],
    ['bad dim', () => engine.createDataset({ name: 'x', dim: 0 })],
    ['bad index type', () => engine.createDataset({ name: 'x', dim: 3, indexType: 'lsh' as never })],
    ['promotion policy', () => ds.setPromotionPolicy({ max_buffer_vectors: -1 })],
  ];
  for (const [what, call] of bad) {
    it(`${what}: invalid_argument`, async () => {
      await expect(call()).rejects.toSatisfy((e: unknown) => e instanceof SableError && e.code === 'invalid_argument');
      expect(ds.stats().vector_count).toBe(1);
      expect(ds.getMetadata(1)).toEqual({ a: 1 });
    });
  }

  it('a duplicate dataset name is refused', async () => {
    await expect(engine.createDataset({ name: 'e', dim: 3 })).rejects.toMatchObject({ code: 'dataset_exists' });
  });

  it('the native boundary raises SableError with a code on bad input instead of aborting', () => {
    expect(() => native.segmentCreate(0, 'l2')).toThrow(SableError);
    expect(() => native.segmentCreate(4, 'l3')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => native.search([987654], new Float32Array(4), { k: 1 })).toThrow(expect.objectContaining({ code: 'segment_not_found' }));
    const h = native.segmentCreate(4, 'l2');
    expect(() => native.segmentAppend(h, Float64Array.of(1), new Float32Array(3))).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => native.segmentAppend(h, Float64Array.of(1.5), new Float32Array(4))).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => native.search([h], new Float32Array(5), { k: 1 })).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    native.segmentRelease(h);
  });

  it('a snapshot that is not one is reported as corrupt', async () => {
    await expect(native.segmentLoad('/dev/null')).rejects.toMatchObject({ code: 'snapshot_corrupt' });
    await expect(native.segmentLoad('/nonexistent/x.seg')).rejects.toMatchObject({ code: 'snapshot_missing' });
  });

  it('upsert replaces, delete counts what existed, deleted ids disappear', async () => {
    await ds.upsert([1, 2], Float32Array.of(0, 0, 1, 1, 0, 0), [{ a: 2 }, undefined]);
    expect(ds.getMetadata(1)).toEqual({ a: 2 });
    expect(ds.stats().vector_count).toBe(2);
    expect(await ds.delete([2, 3, 2])).toBe(1);
    expect((await ds.search(Float32Array.of(1, 0, 0), { topK: 5 })).map((h) => h.id)).toEqual([1]);
  });
});
