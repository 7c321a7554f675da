// Index builds held during a bulk load: partitions seal and stay searchable (exactly) without
// being built, the builds run once the hold is lifted, and closing lifts every hold.
import { describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { clustered, row } from '../support/data.js';

describe('holding index builds', () => {
  it('defers builds until released; close() lifts a forgotten hold', async () => {
    const engine = await Engine.open({});
    const dim = 8;
    const data = clustered(600, dim, 3);
    const ds = await engine.createDataset({ name: 'held', dim, metric: 'cosine', promotion: { max_buffer_vectors: 200, max_buffer_age_ms: 3_600_000 } });
    const release = ds.holdBuilds();
    for (let first = 0; first < 600; first += 200) {
      await ds.upsert(Array.from({ length: 200 }, (_, i) => first + i), data.subarray(first * dim, (first + 200) * dim));
    }
    await new Promise((r) => setTimeout(r, 200));
    const held = ds.stats();
    expect(held.partitions).toBeGreaterThanOrEqual(3);
    expect(held.index_status).toBe('building');
    // Sealed partitions waiting for their build answer exactly.
    const hits = await ds.search(row(data, dim, 123), { topK: 1 });
    expect(hits[0].id).toBe(123);
    expect(hits[0].score).toBeCloseTo(0, 3);
    release();
    await ds.flush();
    expect(ds.stats().index_status).toBe('ready');

    ds.holdBuilds();
    await ds.upsert(Array.from({ length: 250 }, (_, i) => 1000 + i), clustered(250, dim, 4));
    await engine.close();
  });
});
