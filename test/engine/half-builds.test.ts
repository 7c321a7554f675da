// Half-precision rows through builds and merges (native/core/codes/vector_store.h): a sable build
// reads a half store's rows a block at a time instead of widening the whole store to float32, a
// merge of half sources stays half, and an index extended over half rows takes them without a
// new training. Checked on the segments' own memory figures and against the exact neighbours.
import { afterEach, describe, expect, it } from 'vitest';
import { native } from '../../dist/engine/native.js';
import { clustered, exactTopK, recall, row } from '../support/data.js';

const DIM = 256;
const ROWS = 6000;
const FLOAT_BYTES = ROWS * DIM * 4;
const handles: number[] = [];
afterEach(() => handles.splice(0).forEach((h) => native.segmentRelease(h)));

function segmentOf(data: Float32Array, first: number, count: number, reserve?: number): number {
  const h = native.segmentCreate(DIM, 'cosine', reserve);
  handles.push(h);
  if (count > 0) native.segmentAppend(h, Float64Array.from({ length: count }, (_, i) => first + i), data.subarray(first * DIM, (first + count) * DIM));
  return h;
}

/** Sealed and compacted as a bulk load's partitions wait for their build: half rows. */
async function sealedHalf(data: Float32Array, first: number, count: number): Promise<number> {
  const h = segmentOf(data, first, count);
  native.segmentSeal(h);
  expect(await native.segmentCompactRows(h, 'sable')).toBe(true);
  return h;
}

/** Builds as sable while sampling the segment's memory at every turn of the event loop. */
async function buildWatchingMemory(h: number): Promise<{ extended: boolean; peak: number }> {
  let peak = native.segmentStats(h).memoryBytes;
  let building = true;
  const watch = (async () => {
    while (building) {
      peak = Math.max(peak, native.segmentStats(h).memoryBytes);
      await new Promise((r) => setImmediate(r));
    }
  })();
  const extended = await native.segmentBuild(h, 'sable', {}).finally(() => (building = false));
  await watch;
  return { extended, peak };
}

function recallOver(handle: number, base: Float32Array, queries: Float32Array): number {
  const nq = queries.length / DIM;
  let sum = 0;
  for (let q = 0; q < nq; q++) {
    const query = row(queries, DIM, q);
    const got = native.search([handle], query, { k: 10 });
    sum += recall([...got.ids], exactTopK('cosine', base, DIM, query, 10));
  }
  return sum / nq;
}

describe('half-precision rows in builds and merges', () => {
  it('a sable build reads half rows without widening the store, and finds the exact neighbours', async () => {
    const data = clustered(ROWS + 40, DIM, 31, 48);
    const h = await sealedHalf(data, 0, ROWS);
    const half = native.segmentStats(h).memoryBytes;
    expect(half).toBeLessThan(0.6 * FLOAT_BYTES);
    const { peak } = await buildWatchingMemory(h);
    // Widened, the store alone would hold FLOAT_BYTES while the index is trained.
    expect(peak).toBeLessThan(0.8 * FLOAT_BYTES);
    expect(native.segmentStats(h)).toMatchObject({ indexType: 'sable', indexStatus: 'ready', rows: ROWS });
    expect(recallOver(h, data.subarray(0, ROWS * DIM), data.subarray(ROWS * DIM))).toBeGreaterThanOrEqual(0.9);
    const own = native.search([h], row(data, DIM, 123), { k: 1 });
    expect(own.ids[0]).toBe(123);
    expect(own.scores[0]).toBeCloseTo(0, 3);
  });

  it('a merge of half sources stays half, then builds; an extension takes half rows without training', async () => {
    const third = ROWS / 3;
    const data = clustered(ROWS + 40, DIM, 37, 48);
    const sources = await Promise.all([0, 1, 2].map((i) => sealedHalf(data, i * third, third)));
    // A tombstoned row is not copied.
    native.segmentRemove(sources[1], Float64Array.of(third + 5));

    const merged = segmentOf(data, 0, 0, ROWS);
    for (const s of sources) await native.segmentAbsorb(merged, s);
    expect(native.segmentStats(merged)).toMatchObject({ rows: ROWS - 1, live: ROWS - 1 });
    expect(native.segmentStats(merged).memoryBytes).toBeLessThan(0.6 * FLOAT_BYTES);
    const built = await buildWatchingMemory(merged);
    expect(built.extended).toBe(false);
    expect(built.peak).toBeLessThan(0.8 * FLOAT_BYTES);
    const live = data.slice(0, ROWS * DIM);
    // The deleted row must not come back: it scores as a far-away zero vector in the oracle.
    live.fill(0, (third + 5) * DIM, (third + 6) * DIM);
    expect(recallOver(merged, live, data.subarray(ROWS * DIM))).toBeGreaterThanOrEqual(0.9);
    expect([...native.segmentContains(merged, Float64Array.of(third + 4, third + 5, third + 6))]).toEqual([1, 0, 1]);

    // 5,000 rows built (one-bit codes, as the 6,000 will want), then extended by the last 1,000
    // (within twice its training rows).
    const base = await sealedHalf(data, 0, 5000);
    await native.segmentBuild(base, 'sable', {});
    const tail = await sealedHalf(data, 5000, ROWS - 5000);
    const grown = await native.segmentExtend(base, [tail]);
    handles.push(grown);
    expect(native.segmentStats(grown).memoryBytes).toBeLessThan(0.8 * FLOAT_BYTES);
    const extended = await buildWatchingMemory(grown);
    expect(extended.extended).toBe(true);
    expect(extended.peak).toBeLessThan(0.8 * FLOAT_BYTES);
    expect(native.segmentStats(grown)).toMatchObject({ rows: ROWS, indexStatus: 'ready' });
    expect(recallOver(grown, data.subarray(0, ROWS * DIM), data.subarray(ROWS * DIM))).toBeGreaterThanOrEqual(0.9);
  });

  it('an extension by a few rows keeps its calibration; one by many measures it again', async () => {
    const data = clustered(7040, DIM, 53, 48);
    const query = data.subarray(7000 * DIM, 7001 * DIM);
    // The calibrated recall at nprobe 1..8: the curve the build measured.
    const curve = (h: number) => Array.from({ length: 8 }, (_, i) => native.search([h], query, { k: 10, nprobe: i + 1 }).partitions[0]!.estimated_recall);
    const base = await sealedHalf(data, 0, 5000);
    await native.segmentBuild(base, 'sable', {});
    const measured = curve(base);
    expect(measured.every((r) => r !== null && r > 0)).toBe(true);
    const extend = async (rows: number) => {
      const grown = await native.segmentExtend(base, [await sealedHalf(data, 5000, rows)]);
      handles.push(grown);
      expect(await native.segmentBuild(grown, 'sable', {})).toBe(true);
      return curve(grown);
    };
    // 10 % more rows: the measurement stands (it is most of an extension's cost).
    expect(await extend(500)).toEqual(measured);
    // 40 % more: measured again over all the rows.
    expect(await extend(2000)).not.toEqual(measured);
  });
});
