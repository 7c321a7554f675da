// Group commit: concurrent writes to one dataset share LMDB commits, keep their order, and are
// never searchable before they are durable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { Rng } from '../../dist/testkit/rng.js';
import { clustered, row } from '../support/data.js';
import { lastTxn } from '../support/lmdb-txn.js';

const DIM = 16;
const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sable-group-'));
  dirs.push(d);
  return d;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('group commit', () => {
  it('commits 300 concurrent upserts in far fewer transactions, none searchable before durable', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'g', dim: DIM, metric: 'l2', promotion: { max_buffer_vectors: 100_000, max_buffer_age_ms: 3_600_000 } });
    const data = clustered(300, DIM, 5);
    const before = lastTxn(dir);
    let settled = 0;
    const writes = Array.from({ length: 300 }, (_, i) =>
      ds.upsert([i], row(data, DIM, i).slice(), [{ n: i }]).then(() => settled++),
    );
    // While the writes go on: whatever a search finds is already in LMDB, metadata and all.
    let seen = 0;
    while (settled < 300) {
      const hits = await ds.search(row(data, DIM, seen % 300), { topK: 20 });
      for (const h of hits) expect(ds.getMetadata(h.id)).toEqual({ n: h.id });
      seen++;
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(writes);
    const commits = lastTxn(dir) - before;
    console.log(`group commit: 300 concurrent upserts in ${commits} commits, ${seen} searches meanwhile`);
    // One commit per write would be 300.
    expect(commits).toBeLessThan(60);
    expect(ds.stats().vector_count).toBe(300);
    await engine.close();

    const again = await Engine.open({ path: dir });
    const reopened = again.getDataset('g')!;
    expect(reopened.stats().vector_count).toBe(300);
    for (const i of [0, 150, 299]) expect(Array.from(reopened.getVector(i)!)).toEqual(Array.from(row(data, DIM, i)));
    await again.close();
  });

  it('applies concurrent upserts and deletes of the same ids in the order they were made', async () => {
    const dir = freshDir();
    const engine = await Engine.open({ path: dir });
    const ds = await engine.createDataset({ name: 'o', dim: DIM, metric: 'l2', promotion: { max_buffer_vectors: 40, max_buffer_age_ms: 3_600_000 } });
    const rng = new Rng(11);
    const model = new Map<number, { v: number; tag: string }>();
    const pending: Promise<unknown>[] = [];
    for (let step = 0; step < 400; step++) {
      const ids = Array.from({ length: 1 + rng.int(3) }, () => rng.int(25));
      if (rng.int(3) === 0) {
        pending.push(ds.delete(ids));
        for (const id of ids) model.delete(id);
      } else {
        const vectors = new Float32Array(ids.length * DIM);
        const meta = ids.map((id, j) => {
          vectors.fill(step + j / 10, j * DIM, (j + 1) * DIM);
          return { tag: `s${step}` };
        });
        pending.push(ds.upsert(ids, vectors, meta));
        ids.forEach((id, j) => model.set(id, { v: step + j / 10, tag: `s${step}` }));
      }
      // Bursts: the writes of a burst wait together, so turns hold many of them.
      if (step % 50 === 49) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);

    const check = (d: typeof ds) => {
      for (let id = 0; id < 25; id++) {
        const want = model.get(id);
        if (!want) {
          expect(d.getVector(id), `id ${id}`).toBeUndefined();
          continue;
        }
        const v = d.getVector(id);
        expect(v?.[0], `id ${id}`).toBe(Math.fround(want.v));
        expect(d.getMetadata(id)).toEqual({ tag: want.tag });
      }
      expect(d.stats().vector_count).toBe(model.size);
    };
    check(ds);
    // The segments agree with LMDB: each live id is its own nearest row, deleted ones are never found.
    for (const [id, { v }] of model) {
      const hits = await ds.search(new Float32Array(DIM).fill(v), { topK: 1, exact: true });
      expect(hits[0]?.id).toBe(id);
    }
    await engine.close();
    const again = await Engine.open({ path: dir });
    check(again.getDataset('o')!);
    await again.close();
  });
});
