import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { clustered, row } from '../support/data.js';

describe('SLA tuner', async () => {
  const engine = await Engine.open({});
  afterAll(() => engine.close());

  it('reports observed latency and moves nprobe down when over target, within bounds', async () => {
    const dim = 32;
    const ds = await engine.createDataset({
      name: 'sla', dim, metric: 'l2', indexType: 'ivf',
      promotion: { max_buffer_vectors: 100_000, max_buffer_age_ms: 3_600_000 },
    });
    const data = clustered(8000, dim, 8);
    await ds.upsert(Array.from({ length: 8000 }, (_, i) => i), data);
    await ds.flush();
    expect(ds.sla.current_nprobe).toBeNull();
    // An unreachable target: the tuner must trade recall for latency down to min_nprobe.
    await ds.setSla({ target_p99_us: 1, min_nprobe: 2, max_nprobe_fraction: 50, min_beam_width: 8, max_beam_width: 64 });
    for (let i = 0; i < 400; i++) await ds.search(row(data, dim, i), { topK: 10 });
    const s = ds.sla;
    expect(s.observed_p99_us).toBeGreaterThan(0);
    expect(s.observed_p50_us).toBeLessThanOrEqual(s.observed_p99_us!);
    expect(s.current_nprobe).toBe(2);
    const { receipt } = await ds.searchDetailed(row(data, dim, 0), { topK: 10 });
    expect(receipt.partitions[0].nprobe).toBe(2);
    // A generous target: nprobe climbs back toward recall, capped at the fraction of nlist.
    await ds.setSla({ target_p99_us: 10_000_000 });
    for (let i = 0; i < 1000; i++) await ds.search(row(data, dim, i), { topK: 10 });
    const nlist = Math.round(4 * Math.sqrt(8000));
    expect(ds.sla.current_nprobe).toBeGreaterThan(2);
    expect(ds.sla.current_nprobe).toBeLessThanOrEqual(Math.max(2, Math.floor(nlist / 2)));
    // Explicit knobs on a query always win over the tuner.
    const explicit = await ds.searchDetailed(row(data, dim, 0), { topK: 10, nprobe: 7 });
    expect(explicit.receipt.partitions[0].nprobe).toBe(7);
  });
});
