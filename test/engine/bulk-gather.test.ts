// Bulk loads gather the partitions they freeze into one (engine/dataset/bulk-load.ts): searches
// during the load keep each row once while it is copied, deletes on gathered rows stay deleted,
// the load ends with one partition built once, and a SIGKILL mid-load loses no acknowledged row
// and brings no deleted one back.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../dist/engine/index.js';
import { clustered, exactTopK, recall, row } from '../support/data.js';
import { seededVector } from '../support/seeded-vector.mjs';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'sable-gather-'));
  dirs.push(d);
  return d;
};

describe('bulk loads gather their partitions', () => {
  it('into one partition, searched without duplicates meanwhile, deletes kept, built once', async () => {
    const DIM = 64;
    const N = 3000;
    const data = clustered(N + 20, DIM, 11, 24);
    const engine = await Engine.open({ path: tempDir() });
    try {
      const ds = await engine.createDataset({ name: 'gather', dim: DIM, metric: 'cosine', promotion: { max_buffer_vectors: 400, max_buffer_age_ms: 3_600_000 } });
      const bulk = ds.beginBulkLoad();
      bulk.expectRows(N);
      let loading = true;
      let searches = 0;
      // Three searchers, so searches overlap the copies into the gathered partition.
      const searcher = async (lane: number) => {
        while (loading) {
          const q = (searches++ * 3 + lane) % N;
          const hits = await ds.search(row(data, DIM, q), { topK: 40, includeMetadata: false });
          const ids = hits.map((h) => h.id);
          expect(new Set(ids).size).toBe(ids.length);
          await new Promise((r) => setImmediate(r));
        }
      };
      const searchers = Promise.all([0, 1, 2].map(searcher));
      const deleted = new Set<number>();
      let most = 0;
      for (let first = 0; first < N; first += 200) {
        const ids = Float64Array.from({ length: 200 }, (_, i) => first + i);
        await ds.upsert(ids, data.subarray(first * DIM, (first + 200) * DIM), undefined, { bulk: true });
        if (first >= 1000) {
          // Rows loaded earlier, by now in the gathered partition or on their way to it.
          const doomed = [first - 1000, first - 999];
          expect(await ds.delete(doomed)).toBe(2);
          doomed.forEach((id) => deleted.add(id));
        }
        most = Math.max(most, ds.stats().partitions);
      }
      loading = false;
      await searchers;
      expect(searches).toBeGreaterThan(10);
      // The growing partition, the gathered one, and one frozen partition on its way at most.
      expect(most).toBeLessThanOrEqual(3);
      bulk.end();
      await ds.flush();
      expect(ds.stats()).toMatchObject({ partitions: 1, vector_count: N - deleted.size, index_status: 'ready' });
      for (const id of deleted) {
        expect(ds.getVector(id)).toBeUndefined();
        expect((await ds.search(row(data, DIM, id), { topK: 1 }))[0].id).not.toBe(id);
      }
      const live = data.slice(0, N * DIM);
      for (const id of deleted) live.fill(0, id * DIM, (id + 1) * DIM);
      const queries = data.subarray(N * DIM);
      const results = await ds.searchBatch(queries, { topK: 10, includeMetadata: false });
      const r = results.reduce((sum, hits, q) => sum + recall(hits.map((h) => h.id), exactTopK('cosine', live, DIM, row(queries, DIM, q), 10)), 0) / results.length;
      expect(r).toBeGreaterThanOrEqual(0.9);
    } finally {
      await engine.close();
    }
  });

  it('loses no acknowledged row and revives no deleted one when killed mid-load', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [join(__dirname, '..', 'support', 'bulk-gather-child.mjs'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let acked = -1;
    const deleted: number[] = [];
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n')) {
          const m = /^(ack|del) (\d+)$/.exec(line);
          if (m?.[1] === 'ack') acked = Number(m[2]);
          else if (m) deleted.push(Number(m[2]));
        }
        // Several partitions of 300 rows gathered by then.
        if (acked >= 2500) child.kill('SIGKILL');
      });
      child.on('exit', () => resolve());
    });
    expect(acked).toBeGreaterThanOrEqual(2500);
    const engine = await Engine.open({ path: dir });
    try {
      const ds = engine.getDataset('gather')!;
      const gone = new Set(deleted);
      // The last batch's delete may have committed without being acknowledged.
      const unknown = acked - 94;
      for (let id = 0; id <= acked; id++) {
        if (gone.has(id)) expect(ds.getVector(id)).toBeUndefined();
        else if (id !== unknown) expect(ds.getVector(id)).toBeDefined();
      }
      await ds.flush();
      const st = ds.stats();
      expect(st.index_status).toBe('ready');
      expect(st.vector_count).toBeGreaterThanOrEqual(acked - gone.size);
      for (let id = 0; id <= acked; id += 97) {
        const vector = ds.getVector(id);
        if (!vector) continue;
        expect((await ds.search(vector, { topK: 1 }))[0].id).toBe(id);
      }
      for (const id of gone) expect((await ds.search(seededVector(id, 16), { topK: 1 }))[0].id).not.toBe(id);
    } finally {
      await engine.close();
    }
  });
});
