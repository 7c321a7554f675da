import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine, type IndexType } from '../../dist/engine/index.js';
import { LmdbStore } from '../../dist/engine/lmdb-store.js';
import { clustered, row } from '../support/data.js';

const DIM = 24;
const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sable-test-'));
  dirs.push(d);
  return d;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const POLICY = { max_buffer_vectors: 1000, max_buffer_age_ms: 3_600_000 };

/** HNSW where a test needs several sealed partitions: indexes with lists fold into one. */
async function fill(dir: string, indexType: IndexType = 'sable') {
  const engine = await Engine.open({ path: dir });
  const ds = await engine.createDataset({ name: 'docs', dim: DIM, metric: 'cosine', indexType, promotion: POLICY });
  const data = clustered(3500, DIM, 3);
  const ids = Array.from({ length: 3500 }, (_, i) => i);
  const meta = ids.map((i) => ({ n: i, tag: i % 2 ? 'odd' : 'even' }));
  // Batches of the promotion size: each fills the growing partition, which is then sealed.
  for (let start = 0; start < 3500; start += 1000) {
    const end = Math.min(3500, start + 1000);
    await ds.upsert(ids.slice(start, end), data.subarray(start * DIM, end * DIM), meta.slice(start, end));
  }
  await ds.flush();
  await ds.delete([0, 1, 2]);
  await ds.upsert([10], row(data, DIM, 20), [{ n: -10, tag: 'moved' }]);
  await ds.upsert([5000, 5001], data.subarray(0, 2 * DIM));
  return { engine, ds, data };
}

describe('persistence', () => {
  it('reopens from snapshots without rebuilding, with deletes, replacements and growing rows', async () => {
    const dir = freshDir();
    const { engine, data } = await fill(dir);
    const before = engine.getDataset('docs')!.stats();
    expect(before.vector_count).toBe(3499);
    await engine.close();

    const again = await Engine.open({ path: dir });
    const ds = again.getDataset('docs')!;
    expect(ds.rebuiltSnapshots).toBe(0);
    expect(ds.stats().vector_count).toBe(3499);
    expect(ds.stats().index_status).toBe('ready');
    expect(ds.getMetadata(0)).toBeUndefined();
    expect(ds.getMetadata(10)).toEqual({ n: -10, tag: 'moved' });
    expect(ds.getMetadata(5000)).toEqual({});
    const hits = await ds.search(row(data, DIM, 20), { topK: 2 });
    expect(hits.map((h) => h.id).sort()).toEqual([10, 20]);
    expect((await ds.search(row(data, DIM, 1), { topK: 3 })).map((h) => h.id)).not.toContain(1);
    const tagged = await ds.search(row(data, DIM, 0), { topK: 5, filters: { tag: 'moved' } });
    expect(tagged.map((h) => h.id)).toEqual([10]);
    await again.close();
  });

  it('an upsert keeps the last of repeated ids and forgets the metadata of a vector replaced without any, across a restart', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'rows', dim: 2, metric: 'l2' });
    await ds.upsert(Float64Array.of(1, 2, 3), Float32Array.of(1, 0, 2, 0, 3, 0), [{ tag: 'a' }, { tag: 'b' }, { tag: 'c' }]);
    // One call: id 2 twice (the second wins), id 3 replaced without metadata, id 4 new.
    await ds.upsert([2, 3, 2, 4], Float32Array.of(9, 9, 3, 0, 20, 0, 4, 0), [{ tag: 'first' }, undefined, { tag: 'second' }, { tag: 'd' }]);
    const check = async (d: typeof ds) => {
      expect(d.stats().vector_count).toBe(4);
      expect(d.getMetadata(2)).toEqual({ tag: 'second' });
      expect(d.getMetadata(3)).toEqual({});
      expect(d.getMetadata(4)).toEqual({ tag: 'd' });
      expect(Array.from(d.getVector(2)!)).toEqual([20, 0]);
      expect((await d.search(Float32Array.of(20, 0), { topK: 1 }))[0].id).toBe(2);
    };
    await check(ds);
    await engine.close();
    const again = await Engine.open({ path: dir });
    await check(again.getDataset('rows')!);
    await again.close();
  });

  it('reopens the growing partition as it was: rewrites once, deletions gone, sealed rows not repeated', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'g', dim: DIM, metric: 'l2', promotion: POLICY });
    const data = clustered(300, DIM, 2);
    await ds.upsert(Array.from({ length: 100 }, (_, i) => i), data.subarray(0, 100 * DIM));
    await ds.flush(); // rows 0..99 sealed
    await ds.upsert(Array.from({ length: 200 }, (_, i) => 100 + i), data.subarray(100 * DIM, 300 * DIM));
    await ds.upsert([150, 151], data.subarray(0, 2 * DIM)); // rewritten in the same growing partition
    await ds.delete([160, 161, 162]);
    await ds.upsert([5], row(data, DIM, 299)); // moved from the sealed partition into the growing one
    expect(ds.stats().vector_count).toBe(297);
    await engine.close();

    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('g')!;
    expect(reopened.stats().vector_count).toBe(297);
    expect(reopened.stats().growing_vectors).toBe(198);
    expect(reopened.getVector(150)).toEqual(row(data, DIM, 0));
    expect(reopened.getMetadata(160)).toBeUndefined();
    const near = await reopened.search(row(data, DIM, 299), { topK: 3 });
    expect(near.map((h) => h.id).filter((id) => id === 5 || id === 299).sort((a, b) => a - b)).toEqual([5, 299]);
    expect(new Set(near.map((h) => h.id)).size).toBe(near.length);
    await reopened.flush();
    expect(reopened.stats().growing_vectors).toBe(0);
    await again.close();
    const third = await Engine.open({ path: dir });
    expect(third.getDataset('g')!.stats()).toMatchObject({ vector_count: 297, growing_vectors: 0 });
    await third.close();
  });

  it('rebuilds a corrupt or missing snapshot from LMDB', async () => {
    const dir = freshDir();
    const { engine, data } = await fill(dir, 'hnsw');
    await engine.close();
    const segs = readdirSync(join(dir, 'segments')).filter((f) => f.endsWith('.seg'));
    expect(segs.length).toBeGreaterThanOrEqual(3);
    truncateSync(join(dir, 'segments', segs[0]), 100);
    writeFileSync(join(dir, 'segments', segs[1]), 'not a snapshot at all, just some bytes that are long enough');
    rmSync(join(dir, 'segments', segs[2]));

    const again = await Engine.open({ path: dir });
    const ds = again.getDataset('docs')!;
    expect(ds.rebuiltSnapshots).toBe(3);
    expect(ds.stats().vector_count).toBe(3499);
    for (const probe of [100, 1500, 3400]) {
      const hits = await ds.search(row(data, DIM, probe), { topK: 1 });
      expect(hits[0].id).toBe(probe);
    }
    await again.close();
    // Rebuilt snapshots were written back: the next open loads them.
    const third = await Engine.open({ path: dir });
    expect(third.getDataset('docs')!.rebuiltSnapshots).toBe(0);
    await third.close();
  });

  it('refuses a valid snapshot of another dataset with the same ids, and rebuilds it', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ids = Array.from({ length: 1000 }, (_, i) => i);
    const a = await engine.createDataset({ name: 'a', dim: DIM, metric: 'cosine', promotion: POLICY });
    const b = await engine.createDataset({ name: 'b', dim: DIM, metric: 'cosine', promotion: POLICY });
    const dataA = clustered(1000, DIM, 4);
    const dataB = clustered(1000, DIM, 5);
    await a.upsert(ids, dataA);
    await b.upsert(ids, dataB);
    await a.flush();
    await b.flush();
    const [uidA, uidB] = [a.manifest.uid, b.manifest.uid];
    await engine.close();
    // Every id check passes for b's snapshot in a's place; only its checksum tells them apart.
    const segs = readdirSync(join(dir, 'segments'));
    const ofA = segs.find((f) => f.startsWith(`${uidA}-`))!;
    const ofB = segs.find((f) => f.startsWith(`${uidB}-`))!;
    writeFileSync(join(dir, 'segments', ofA), readFileSync(join(dir, 'segments', ofB)));

    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('a')!;
    expect(reopened.rebuiltSnapshots).toBe(1);
    for (const probe of [3, 500, 999]) {
      const [hit] = await reopened.search(row(dataA, DIM, probe), { topK: 1 });
      expect(hit).toMatchObject({ id: probe });
      expect(hit.score).toBeCloseTo(0, 5);
    }
    expect(again.getDataset('b')!.rebuiltSnapshots).toBe(0);
    await again.close();
  });

  it('repairs a snapshot that holds rows LMDB no longer holds (deletes resurrected before format 3)', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'r', dim: DIM, metric: 'cosine', promotion: POLICY });
    const data = clustered(200, DIM, 2);
    await ds.upsert(Array.from({ length: 200 }, (_, i) => i), data);
    await ds.flush();
    const uid = ds.manifest.uid;
    await engine.close();
    // What a delete of rows 7 and 8 while their partition was growing left behind before the fix:
    // the snapshot still holds them live, LMDB holds neither them nor their membership.
    const storage = LmdbStore.open(dir);
    const [sealed] = [...storage.parts.getRange({ start: [uid], end: [uid, '\uffff'] })].map((e) => e.value).filter((r) => r.state === 'sealed');
    const members = storage.sealedIds(uid, sealed).filter((id) => id !== 7 && id !== 8);
    await storage.write(() => {
      storage.putSealed(uid, sealed, members);
      for (const id of [7, 8]) storage.vectors.remove([uid, id]);
    });
    await storage.close();

    const again = await Engine.open({ path: dir });
    const repaired = again.getDataset('r')!;
    expect(repaired.repairedRows).toBe(2);
    expect(repaired.rebuiltSnapshots).toBe(0);
    expect(repaired.stats().vector_count).toBe(198);
    for (const id of [7, 8]) {
      const hits = await repaired.search(row(data, DIM, id), { topK: 5 });
      expect(hits.map((h) => h.id)).not.toContain(id);
    }
    expect((await repaired.search(row(data, DIM, 9), { topK: 1 }))[0].id).toBe(9);
    await again.close();
    // The repaired snapshot was written back.
    const third = await Engine.open({ path: dir });
    expect(third.getDataset('r')!.repairedRows).toBe(0);
    expect(third.getDataset('r')!.stats().vector_count).toBe(198);
    await third.close();
  });

  it('drops a dataset with its vectors and snapshot files', async () => {
    const dir = freshDir();
    const { engine } = await fill(dir);
    expect(readdirSync(join(dir, 'segments')).length).toBeGreaterThan(0);
    expect(await engine.dropDataset('docs')).toBe(true);
    expect(engine.getDataset('docs')).toBeUndefined();
    expect(readdirSync(join(dir, 'segments')).filter((f) => f.endsWith('.seg'))).toEqual([]);
    await engine.close();
    const again = await Engine.open({ path: dir });
    expect(again.listDatasets()).toEqual([]);
    const ds = await again.createDataset({ name: 'docs', dim: DIM });
    expect(ds.stats().vector_count).toBe(0);
    await again.close();
  });

  it('compaction merges partitions and drops tombstones, durably', async () => {
    const dir = freshDir();
    const { engine, data } = await fill(dir, 'hnsw');
    const ds = engine.getDataset('docs')!;
    await ds.flush();
    const partitionsBefore = ds.stats().partitions;
    expect(partitionsBefore).toBeGreaterThan(2);
    const { merged } = await ds.compact();
    expect(merged).toBeGreaterThanOrEqual(2);
    const after = ds.stats();
    expect(after.partitions).toBeLessThan(partitionsBefore);
    expect(after.deleted_count).toBe(0);
    expect(after.vector_count).toBe(3499);
    await engine.close();
    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('docs')!;
    expect(reopened.rebuiltSnapshots).toBe(0);
    expect(reopened.stats().vector_count).toBe(3499);
    expect((await reopened.search(row(data, DIM, 2000), { topK: 1 }))[0].id).toBe(2000);
    await again.close();
  });
});
