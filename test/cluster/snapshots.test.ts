// Shard snapshots in object storage (cluster/shard-snapshots.ts, design §3.5): a replica's rows
// written out and loaded back whole, a corrupt object refused before anything is applied, the log
// cut behind the second-newest snapshot; then three `sable serve` nodes that take snapshots as
// they are written to, a node restarted from snapshot + log tail, and a node paused while the log
// was cut past what it had applied, which starts its replicas again from the snapshot and rejoins.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRows, importRows, recordSnapshot, type SnapshotRow } from '../../dist/cluster/shard-snapshots.js';
import { appendParts, appendWrite, createShards } from '../../dist/cluster/shard-log.js';
import { Engine } from '../../dist/engine/index.js';
import { migrate } from '../../dist/outbound/postgres/migrations.js';
import { openPool } from '../../dist/outbound/postgres/pool.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';
import { startCluster, until, until503Passes, type TestCluster } from '../support/cluster.js';

const DIM = 8;

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.sin(id * 1.3 + j * 0.7) + (id % 11) * 0.03);
}

function l2(a: number[], b: number[]): number {
  return a.reduce((s, x, j) => s + (x - b[j]!) ** 2, 0);
}

describe('a shard snapshot file', () => {
  let dir: string;
  let engine: Engine;
  let pgServer: LocalPostgres;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-snap-'));
    engine = await Engine.open({ path: join(dir, 'engine') });
    pgServer = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    await pgServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds every live row with its vector and metadata, and loads back into an empty dataset', async () => {
    const src = await engine.createDataset({ name: 'src', dim: DIM, metric: 'l2', schema: [{ name: 'n', type: 'f64' }] });
    const ids = Array.from({ length: 9000 }, (_, i) => i + 1);
    const vectors = new Float32Array(ids.flatMap(vector));
    await src.upsert(ids, vectors, ids.map((id) => (id % 3 === 0 ? { n: id, tag: `t${id % 5}` } : null)));
    expect(await src.delete(ids.filter((id) => id % 4 === 0))).toBe(2250);
    const file = join(dir, 'one.snap');
    const out = await exportRows(src, file, 'ds', 1, 42);
    expect(out.rows).toBe(6750);
    expect(out.sha256).toMatch(/^[0-9a-f]{64}$/);

    const row: SnapshotRow = { dataset: 'ds', shard: 1, seq: 42, key: 'k', node: 'n1', ...out };
    const copy = await engine.createDataset({ name: 'copy', dim: DIM, metric: 'l2', schema: [{ name: 'n', type: 'f64' }] });
    expect(await importRows(file, copy, row)).toBe(6750);
    expect(copy.stats().vector_count).toBe(6750);
    for (const id of [1, 3, 4, 8999, 9000, 6000, 6001]) {
      expect(copy.getMetadata(id)).toEqual(src.getMetadata(id));
      expect(copy.getVector(id) && Array.from(copy.getVector(id)!)).toEqual(src.getVector(id) && Array.from(src.getVector(id)!));
    }
    expect(copy.getVector(4)).toBeUndefined();
    const q = new Float32Array(vector(77));
    expect((await copy.search(q, { topK: 10 })).map((h) => h.id)).toEqual((await src.search(q, { topK: 10 })).map((h) => h.id));
  });

  it('is refused whole when a byte changed, or when it is not the shard and seq its row names', async () => {
    const src = await engine.createDataset({ name: 'src2', dim: DIM, metric: 'l2' });
    await src.upsert([1, 2, 3], new Float32Array([...vector(1), ...vector(2), ...vector(3)]));
    const file = join(dir, 'two.snap');
    const out = await exportRows(src, file, 'ds', 0, 7);
    const row: SnapshotRow = { dataset: 'ds', shard: 0, seq: 7, key: 'k2', node: 'n1', ...out };
    const bytes = readFileSync(file);
    bytes[bytes.length - 3] ^= 0xff;
    writeFileSync(join(dir, 'bad.snap'), bytes);
    const target = await engine.createDataset({ name: 'target', dim: DIM, metric: 'l2' });
    await expect(importRows(join(dir, 'bad.snap'), target, row)).rejects.toThrow(/checksum/);
    await expect(importRows(file, target, { ...row, seq: 8 })).rejects.toThrow(/not what its row says/);
    expect(target.getVector(1)).toBeUndefined();
  });

  it('recorded: the log is cut behind the second-newest snapshot, older snapshots and cut bulk batches are handed back for deletion', async () => {
    const pool = openPool(pgServer.url, { max: 4 });
    try {
      await migrate(pool);
      await createShards(pool, 'ds', 1);
      // Seq 1 is a bulk batch in object storage (its key in the log), then 29 upserts.
      await appendParts(pool, 'ds', [{ shard: 0, blobKey: 'cluster/log/bulk-1' }], 'r1');
      for (let i = 2; i <= 30; i++) {
        await appendWrite(pool, 'ds', 1, { op: 'upsert', ids: Float64Array.of(i), vectors: new Float32Array(vector(i)), dim: DIM }, `r${i}`);
      }
      const snap = (seq: number): SnapshotRow => ({ dataset: 'ds', shard: 0, seq, key: `snap-${seq}`, rows: seq, bytes: 1, sha256: 'x', node: 'n1' });
      expect(await recordSnapshot(pool, snap(10))).toEqual({ recorded: true, removedKeys: [], cutEntries: 0 });
      // With two, the log up to the older one goes (the bulk batch's object with it); no snapshot is older than it yet.
      expect(await recordSnapshot(pool, snap(20))).toEqual({ recorded: true, removedKeys: ['cluster/log/bulk-1'], cutEntries: 10 });
      expect(await recordSnapshot(pool, snap(20))).toEqual({ recorded: false, removedKeys: [], cutEntries: 0 });
      expect(await recordSnapshot(pool, snap(25))).toEqual({ recorded: true, removedKeys: ['snap-10'], cutEntries: 10 });
      const { rows } = await pool.query('SELECT min(seq)::int AS lo, max(seq)::int AS hi FROM vector_log WHERE dataset = $1', ['ds']);
      expect(rows[0]).toEqual({ lo: 21, hi: 30 });
      const kept = await pool.query('SELECT seq::int FROM shard_snapshots ORDER BY seq');
      expect(kept.rows.map((r) => r.seq)).toEqual([20, 25]);
    } finally {
      await pool.end();
    }
  });
});

describe('three nodes taking snapshots as they are written to', () => {
  let cluster: TestCluster;
  let db: pg.Client;
  let datasetId = '';
  const live = new Map<number, number[]>();
  const deleted = new Set<number>();
  let nextId = 1;
  /** Nodes (by index) that hold replicas of the dataset. */
  let holders: number[] = [];

  beforeAll(async () => {
    // A long grace: a paused node keeps its replicas placed, so it comes back to a log cut past it.
    cluster = await startCluster({ nodes: 3, graceMs: 60_000, env: { SABLE_SNAPSHOT_ENTRIES: '10' } });
    db = new pg.Client({ connectionString: cluster.pg.url });
    await db.connect();
  }, 90_000);
  afterAll(async () => {
    await db?.end();
    await cluster?.stop();
  });

  const write = async (node: number, batches: number) => {
    for (let b = 0; b < batches; b++) {
      const ids = Array.from({ length: 10 }, () => nextId++);
      const r = await until503Passes(() =>
        cluster.call(node)('POST', `/datasets/${datasetId}/insert`, { vectors: ids.map((id) => ({ id, values: vector(id), metadata: { n: id } })) }),
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      for (const id of ids) live.set(id, vector(id));
      if (b % 5 === 4) {
        const gone = ids.slice(0, 3);
        const d = await until503Passes(() => cluster.call(node)('DELETE', `/datasets/${datasetId}/vectors`, { ids: gone }));
        expect(d.status, JSON.stringify(d.body)).toBe(200);
        for (const id of gone) live.delete(id), deleted.add(id);
      }
    }
  };

  /** Every shard's lowest logged seq (the log was cut when it is past 1) and its snapshots. */
  const logState = async () => {
    const { rows } = await db.query(
      `SELECT h.shard, h.last_seq::int AS head, (SELECT min(seq)::int FROM vector_log l WHERE l.dataset = h.dataset AND l.shard = h.shard) AS lo,
              (SELECT count(*)::int FROM shard_snapshots s WHERE s.dataset = h.dataset AND s.shard = h.shard) AS snapshots
       FROM shard_heads h WHERE h.dataset = $1 ORDER BY h.shard`,
      [datasetId],
    );
    return rows as { shard: number; head: number; lo: number | null; snapshots: number }[];
  };

  const replicasOf = async (node: string) =>
    (await db.query('SELECT shard, state, applied_seq::int AS applied FROM shard_replicas WHERE dataset = $1 AND node = $2 ORDER BY shard', [datasetId, node]))
      .rows as { shard: number; state: string; applied: number }[];

  /** Through node i, whose own replicas answer first: the exact top 10, no deleted id, every point read right. */
  const checkThrough = async (i: number) => {
    for (const q of [5, 120, 333]) {
      const query = vector(q).map((x) => x + 0.01);
      const r = await until503Passes(() => cluster.call(i)('POST', `/datasets/${datasetId}/search`, { query, top_k: 10 }));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const expected = [...live.entries()].sort((a, b) => l2(query, a[1]) - l2(query, b[1]) || a[0] - b[0]).slice(0, 10).map(([id]) => id);
      expect(r.body.results.map((h: { id: number }) => h.id)).toEqual(expected);
    }
    for (const id of [...deleted].slice(0, 10)) expect((await cluster.call(i)('GET', `/datasets/${datasetId}/payload/${id}`)).status).toBe(404);
    for (const id of [...live.keys()].filter((id) => id % 37 === 0)) {
      const p = await cluster.call(i)('GET', `/datasets/${datasetId}/payload/${id}`);
      expect(p.status).toBe(200);
      expect(p.body.metadata).toMatchObject({ n: id });
    }
    const stats = await cluster.call(i)('GET', `/datasets/${datasetId}/stats`);
    expect(stats.body.vector_count).toBe(live.size);
  };

  it('snapshots every shard to object storage and cuts the log behind the second-newest', async () => {
    const made = await cluster.call(0)('POST', '/datasets', { name: 'snapped', dim: DIM, metric: 'l2' });
    expect(made.status).toBe(201);
    datasetId = made.body.id;
    // A snapshot is due every 10 entries, taken at the owner's next pass: writes go on in rounds
    // until each shard has two and its log was cut behind the older.
    const cut = async () => {
      const s = await logState();
      return s.length === 2 && s.every((x) => x.snapshots === 2 && x.lo !== null && x.lo > 1) ? s : null;
    };
    for (let round = 0; round < 30 && !(await cut()); round++) {
      await write(round % 3, 4);
      await new Promise((r) => setTimeout(r, 300));
    }
    const state = await until('two snapshots per shard and a cut log', cut).catch(async (e) => {
      console.log(JSON.stringify(await logState()), cluster.nodes.map((n) => n!.stderr().slice(-2000)));
      throw e;
    });
    expect(state.every((x) => x.head > 20)).toBe(true);
    const { rows } = await db.query('SELECT node FROM shard_replicas WHERE dataset = $1 GROUP BY node ORDER BY node', [datasetId]);
    holders = rows.map((r) => Number(r.node.slice(1)) - 1);
    expect(holders.length).toBeGreaterThanOrEqual(2); // 4 replicas on 3 nodes
    const health = await (await fetch(`${cluster.nodes[holders[0]!]!.url}/healthz`)).json();
    expect(health.cluster.replicas).toBeGreaterThan(0);
    await checkThrough(0);
  });

  it('a node restarted after kill -9 loads its replicas from the snapshot and the log after it', async () => {
    const i = holders[0]!;
    await cluster.nodes[i]!.stop('SIGKILL');
    await cluster.start(i);
    await until(`n${i + 1} replicas in sync again`, async () => {
      const [mine, heads] = [await replicasOf(`n${i + 1}`), await logState()];
      return mine.length > 0 && mine.every((r) => r.state === 'active' && r.applied === heads[r.shard]!.head);
    });
    const health = await (await fetch(`${cluster.nodes[i]!.url}/healthz`)).json();
    expect(health.cluster.replicas).toBeGreaterThan(0);
    await write(i, 3);
    await checkThrough(i);
  });

  it('a node paused while the log was cut past it starts its replicas again from the snapshot and rejoins', async () => {
    const i = holders[1]!;
    const others = [0, 1, 2].filter((n) => n !== i);
    const paused = cluster.nodes[i]!;
    const before = await replicasOf(`n${i + 1}`);
    expect(before.length).toBeGreaterThan(0);
    paused.child.kill('SIGSTOP');
    try {
      // Writes go on until two snapshots were taken past what the paused node applied.
      const cutPast = async () => {
        const heads = await logState();
        return before.every((r) => (heads[r.shard]!.lo ?? 0) > r.applied + 1);
      };
      for (let round = 0; round < 20 && !(await cutPast()); round++) {
        await write(others[round % 2]!, 4);
        await new Promise((r) => setTimeout(r, 300)); // a pass of the owners' shard hosts
      }
      await until(`the log cut past what n${i + 1} applied`, cutPast);
    } finally {
      paused.child.kill('SIGCONT');
    }
    await until(`n${i + 1} replicas in sync again`, async () => {
      const [mine, heads] = [await replicasOf(`n${i + 1}`), await logState()];
      return mine.length === before.length && mine.every((r) => r.state === 'active' && r.applied === heads[r.shard]!.head);
    }, 30_000);
    expect(paused.stderr()).toMatch(new RegExp(`replica \\S+ on n${i + 1} starts again: gap in the log`));
    await checkThrough(i);
  });
});
