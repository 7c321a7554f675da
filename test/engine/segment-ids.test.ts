// The segment's id -> row table (native/core/segment/id_table.cpp) checked against a JS Set
// through the N-API boundary: random appends, deletes and lookups, including deletions in the
// middle of probe clusters, colliding dense and sparse ids, and a duplicate inside one append.
import { describe, expect, it } from 'vitest';
import { native } from '../../dist/engine/native.js';
import { seeded as rng } from '../support/engine-model.mjs';

describe('segment id table', () => {
  it('agrees with a Set over 20k random appends, deletes and lookups', () => {
    const random = rng(7);
    const h = native.segmentCreate(2, 'l2');
    const live = new Set<number>();
    // Dense small ids and huge sparse ones, so both clustering and wide hashing are exercised.
    const pick = () => (random() < 0.7 ? Math.floor(random() * 3000) : Math.floor(random() * 2 ** 52));
    try {
      for (let step = 0; step < 400; step++) {
        const fresh: number[] = [];
        while (fresh.length < 30) {
          const id = pick();
          if (!live.has(id) && !fresh.includes(id)) fresh.push(id);
        }
        native.segmentAppend(h, Float64Array.from(fresh), new Float32Array(fresh.length * 2));
        fresh.forEach((id) => live.add(id));
        const doomed = Array.from({ length: 20 }, pick).concat([...live].slice(0, 5));
        const expected = new Set(doomed.filter((id) => live.has(id))).size;
        expect(native.segmentRemove(h, Float64Array.from(doomed))).toBe(expected);
        doomed.forEach((id) => live.delete(id));
        const probe = Array.from({ length: 20 }, pick).concat([...live].slice(-10));
        const got = native.segmentContains(h, Float64Array.from(probe));
        expect([...got]).toEqual(probe.map((id) => (live.has(id) ? 1 : 0)));
      }
      const all = [...live];
      expect([...native.segmentContains(h, Float64Array.from(all))].every((x) => x === 1)).toBe(true);
      expect(live.size).toBeGreaterThan(1000);
    } finally {
      native.segmentRelease(h);
    }
  });

  it('an append that repeats an id changes nothing', () => {
    const h = native.segmentCreate(2, 'l2');
    try {
      native.segmentAppend(h, Float64Array.of(1, 2), new Float32Array(4));
      expect(() => native.segmentAppend(h, Float64Array.of(3, 4, 3), new Float32Array(6))).toThrow(
        expect.objectContaining({ code: 'invalid_argument' }),
      );
      expect(() => native.segmentAppend(h, Float64Array.of(5, 2), new Float32Array(4))).toThrow(
        expect.objectContaining({ code: 'invalid_argument' }),
      );
      expect([...native.segmentContains(h, Float64Array.of(1, 2, 3, 4, 5))]).toEqual([1, 1, 0, 0, 0]);
      native.segmentAppend(h, Float64Array.of(3, 4), new Float32Array(4));
      expect([...native.segmentContains(h, Float64Array.of(1, 2, 3, 4, 5))]).toEqual([1, 1, 1, 1, 0]);
    } finally {
      native.segmentRelease(h);
    }
  });
});
