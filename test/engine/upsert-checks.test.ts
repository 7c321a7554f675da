// An upsert refuses a batch whose rows cannot be scored: a value that is not finite, or a squared
// length past 1e37 (float32 scores would overflow). A native pass finds the rows that may fail
// (suspect_rows.h, float32 sums from a hair below the limit) and the rule in double precision
// decides each: a row just under the limit is kept, whatever the pass made of it. A refused batch
// stores nothing.
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';

const DIM = 40;
const ROWS = 5000;

describe('upsert value checks', async () => {
  const engine = await Engine.open({});
  afterAll(() => engine.close());
  const ds = await engine.createDataset({ name: 'checks', dim: DIM, metric: 'l2', indexType: 'flat' });
  const ids = (from: number) => Array.from({ length: ROWS }, (_, i) => from + i);
  const rows = () => Float32Array.from({ length: ROWS * DIM }, (_, i) => Math.sin(i) * 3);
  /** Every value of row `r` set so the row's squared length is `squared`. */
  const withLength = (v: Float32Array, r: number, squared: number) => v.fill(Math.sqrt(squared / DIM), r * DIM, (r + 1) * DIM);

  it('refuses the first row that is not finite or too long, anywhere in a batch, and stores nothing', async () => {
    const cases: [string, (v: Float32Array) => void, string][] = [
      ['NaN in row 3,001', (v) => (v[3001 * DIM + 17] = Number.NaN), 'vector 13001 holds a non-finite value'],
      ['Infinity in the last value', (v) => (v[ROWS * DIM - 1] = -Infinity), 'vector 14999 holds a non-finite value'],
      ['a row of squared length 2e37', (v) => withLength(v, 42, 2e37), 'vector 10042 is too long to score'],
      // Each square fits float32 (1e38), their sum does not: the pass sees Infinity.
      ['a row of values 1e19', (v) => v.fill(1e19, 7 * DIM, 8 * DIM), 'vector 10007 is too long to score'],
      ['two bad rows: the first is named', (v) => (withLength(v, 4000, 5e37), (v[900 * DIM] = Number.NaN)), 'vector 10900 holds a non-finite value'],
    ];
    for (const [what, spoil, message] of cases) {
      const v = rows();
      spoil(v);
      await expect(ds.upsert(ids(10_000), v), what).rejects.toThrow(message);
      expect(ds.stats().vector_count, what).toBe(0);
    }
  });

  it('keeps rows just under the limit, which the fast pass reports and the rule passes', async () => {
    const v = rows();
    withLength(v, 10, 0.9995e37);
    withLength(v, 4999, 0.99999e37);
    await ds.upsert(ids(0), v);
    expect(ds.stats().vector_count).toBe(ROWS);
  });
});
