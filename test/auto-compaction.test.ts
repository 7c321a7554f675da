// Automatic compaction: under steady small writes the partitions stay few, replaced and deleted
// rows leave memory and disk, and closing or destroying a dataset waits for (or skips) a merge
// instead of leaving its files behind.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Engine } from '../dist/engine/index.js';
import { clustered, row } from './support/data.js';

const DIM = 16;
const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sable-compact-'));
  dirs.push(d);
  return d;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const SMALL = { max_buffer_vectors: 50, max_buffer_age_ms: 3_600_000 };
const snapshotsIn = (dir: string) => readdirSync(join(dir, 'segments')).filter((f) => f.endsWith('.seg'));

async function writeInSmallBatches(ds: Awaited<ReturnType<Engine['createDataset']>>, data: Float32Array, batches: number) {
  for (let b = 0; b < batches; b++) {
    const ids = Array.from({ length: 50 }, (_, i) => b * 50 + i);
    await ds.upsert(ids, data.subarray(b * 50 * DIM, (b + 1) * 50 * DIM), ids.map((n) => ({ n })));
  }
}

describe('automatic compaction', () => {
  it('keeps the partitions of many small promotions few, every row still found, durably', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'steady', dim: DIM, metric: 'l2', promotion: SMALL });
    const data = clustered(3000, DIM, 5);
    await writeInSmallBatches(ds, data, 60);
    await ds.flush();
    // 60 promotions of 50 rows: tiers of 8 merge into partitions of 400, eight of those into one.
    await vi.waitFor(() => expect(ds.stats().partitions).toBeLessThanOrEqual(12), { timeout: 20_000, interval: 50 });
    expect(ds.stats().vector_count).toBe(3000);
    for (const id of [0, 777, 2999]) expect((await ds.search(row(data, DIM, id), { topK: 1 }))[0].id).toBe(id);
    await engine.close();

    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('steady')!;
    expect(reopened.rebuiltSnapshots).toBe(0);
    expect(reopened.stats().vector_count).toBe(3000);
    expect(reopened.getMetadata(1234)).toEqual({ n: 1234 });
    // One snapshot file per sealed partition: merged ones were removed.
    expect(snapshotsIn(dir).length).toBe(reopened.stats().partitions);
    await again.close();
  });

  it('rewrites a partition once a fifth of its rows are deleted or replaced, and they stay gone', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'churn', dim: DIM, metric: 'cosine', promotion: { max_buffer_vectors: 10_000, max_buffer_age_ms: 3_600_000 } });
    const data = clustered(2000, DIM, 9);
    const ids = Array.from({ length: 2000 }, (_, i) => i);
    await ds.upsert(ids, data, ids.map((n) => ({ n })));
    await ds.flush();
    await ds.delete(ids.slice(0, 300));
    expect(ds.stats().deleted_count).toBe(300);
    // 300 of 2000 dead: below the share, nothing merges.
    await new Promise((r) => setTimeout(r, 300));
    expect(ds.stats().deleted_count).toBe(300);
    await ds.upsert(ids.slice(300, 400), data.subarray(0, 100 * DIM), ids.slice(300, 400).map((n) => ({ n: -n })));
    await vi.waitFor(() => expect(ds.stats().deleted_count).toBe(0), { timeout: 20_000, interval: 50 });
    expect(ds.stats().vector_count).toBe(1700);
    await engine.close();

    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('churn')!;
    expect(reopened.stats().vector_count).toBe(1700);
    expect(reopened.getMetadata(5)).toBeUndefined();
    expect(reopened.getMetadata(350)).toEqual({ n: -350 });
    const hits = await reopened.search(row(data, DIM, 0), { topK: 5 });
    expect(hits.map((h) => h.id)).toContain(300);
    expect(hits.map((h) => h.id).every((id) => id >= 300)).toBe(true);
    await again.close();
  });

  it('a partition whose rows were all deleted is dropped, not kept empty', async () => {
    const engine = await Engine.open({});
    const ds = await engine.createDataset({ name: 'gone', dim: DIM, metric: 'l2', promotion: SMALL });
    const data = clustered(100, DIM, 2);
    await writeInSmallBatches(ds, data, 2);
    await ds.flush();
    expect(ds.stats().partitions).toBe(2);
    await ds.delete(Array.from({ length: 50 }, (_, i) => i));
    await vi.waitFor(() => expect(ds.stats().partitions).toBe(1), { timeout: 20_000, interval: 50 });
    expect(ds.stats().vector_count).toBe(50);
    expect(ds.stats().deleted_count).toBe(0);
    await engine.close();
  });

  it('destroying a dataset while a merge is under way leaves none of its files', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'doomed', dim: DIM, metric: 'l2', promotion: SMALL });
    await writeInSmallBatches(ds, clustered(100, DIM, 7), 2);
    await ds.flush();
    // The merge a delete starts waits for its index build, held: it is under way when destroy comes.
    ds.holdBuilds();
    await ds.delete(Array.from({ length: 20 }, (_, i) => i));
    await new Promise((r) => setTimeout(r, 100));
    expect(ds.stats().deleted_count).toBe(20);
    await engine.dropDataset('doomed');
    expect(snapshotsIn(dir)).toEqual([]);
    await engine.close();
    const again = await Engine.open({ path: dir });
    expect(again.listDatasets()).toEqual([]);
    await again.close();
  });
});
