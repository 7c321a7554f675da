// A frozen partition that the compaction folds into the largest index at once is not built on its
// own (partitions.ts, sealOrFold): its rows wait, searched through the largest index's lists,
// and the fold assigns them to that index. Nothing is lost on the way, nor when the process stops
// while a partition waits (LMDB keeps it as frozen; the next open seals it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine, type Dataset } from '../../dist/engine/index.js';
import { native } from '../../dist/engine/native.js';
import type { Partition } from '../../dist/engine/partition.js';
import { clustered, row } from '../support/data.js';

const DIM = 48;
const BASE = 20_000;
const PROMOTE = 2_000;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const partitionsOf = (ds: Dataset) => (ds as unknown as { core: { partitions: Partition[] } }).core.partitions;

async function loaded(dir: string, data: Float32Array) {
  const engine = await Engine.open({ path: dir });
  const ds = await engine.createDataset({
    name: 'frozen', dim: DIM, metric: 'cosine', indexType: 'sable',
    promotion: { max_buffer_vectors: PROMOTE, max_buffer_age_ms: 3_600_000 },
  });
  for (let s = 0; s < BASE; s += 5_000) await ds.upsert(Array.from({ length: 5_000 }, (_, i) => s + i), data.subarray(s * DIM, (s + 5_000) * DIM));
  await ds.flush();
  expect(ds.stats().partitions).toBe(1);
  return { engine, ds };
}

describe('a frozen partition left to the fold', () => {
  it('is never built on its own, is searched meanwhile, and joins the largest index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-frozen-'));
    dirs.push(dir);
    const data = clustered(BASE + 3 * PROMOTE, DIM, 91, 64);
    const { engine, ds } = await loaded(dir, data);
    // Watch every partition: one left to the fold never has an index of its own.
    const seen = new Map<Partition, { awaited: boolean; builtWhileAwaiting: boolean }>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const p of partitionsOf(ds)) {
          const s = seen.get(p) ?? { awaited: false, builtWhileAwaiting: false };
          if (p.awaitingFold) {
            s.awaited = true;
            if (native.segmentStats(p.handle).indexStatus !== 'none') s.builtWhileAwaiting = true;
          }
          seen.set(p, s);
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let s = BASE; s < BASE + 3 * PROMOTE; s += 500) {
      await ds.upsert(Array.from({ length: 500 }, (_, i) => s + i), data.subarray(s * DIM, (s + 500) * DIM));
      // Every row acknowledged is found, wherever it waits.
      const { hits } = await ds.searchDetailed(row(data, DIM, s + 499), { topK: 1 });
      expect(hits[0].id).toBe(s + 499);
    }
    await ds.flush();
    watching = false;
    await watch;
    const awaited = [...seen.values()].filter((s) => s.awaited);
    expect(awaited.length).toBeGreaterThan(0);
    expect(awaited.every((s) => !s.builtWhileAwaiting)).toBe(true);
    // One indexed partition holds every row.
    expect(ds.stats()).toMatchObject({ partitions: 1, vector_count: BASE + 3 * PROMOTE });
    for (let q = 0; q < 20; q++) {
      const id = BASE + q * 251;
      expect((await ds.search(row(data, DIM, id), { topK: 1 }))[0].id).toBe(id);
    }
    await engine.close();
  });

  it('loses nothing when the process stops while a partition waits for its fold', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-frozen-stop-'));
    dirs.push(dir);
    const data = clustered(BASE + PROMOTE + 10, DIM, 93, 64);
    const first = await loaded(dir, data);
    await first.ds.upsert(Array.from({ length: PROMOTE + 10 }, (_, i) => BASE + i), data.subarray(BASE * DIM, (BASE + PROMOTE + 10) * DIM));
    // The promoted rows wait for their fold; deletes of waiting rows are kept too.
    for (let turns = 0; turns < 10_000 && !partitionsOf(first.ds).some((p) => p.awaitingFold); turns++) await new Promise((r) => setImmediate(r));
    expect(partitionsOf(first.ds).some((p) => p.awaitingFold)).toBe(true);
    await first.ds.delete([BASE + 1, BASE + 2]);
    await first.engine.close();
    const engine = await Engine.open({ path: dir });
    const ds = engine.getDataset('frozen')!;
    await ds.flush();
    expect(ds.stats().vector_count).toBe(BASE + PROMOTE + 8);
    for (const id of [BASE, BASE + 3, BASE + PROMOTE + 9, 17]) expect((await ds.search(row(data, DIM, id), { topK: 1 }))[0].id).toBe(id);
    const gone = await ds.search(row(data, DIM, BASE + 1), { topK: 3 });
    expect(gone.map((h) => h.id)).not.toContain(BASE + 1);
    await engine.close();
  });
});
