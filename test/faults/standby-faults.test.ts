// F9 of the design: PostgreSQL with one synchronous standby (`synchronous_standby_names =
// 'ANY 1 (*)'`, the durability-over-availability setting: a commit is acknowledged once a standby
// has it too), and the standby lost. Every data commit then waits for a standby: writes through
// any node answer 503 within the statement bound instead of hanging, while searches go on (lease
// renewals commit locally, reads need no commit). A new standby brings writes back, and every
// write acknowledged before, during and after is there.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';
import { startCluster, until, until503Passes, type TestCluster } from '../support/cluster.js';
import { Acked, checkAcked, DIM, sleep, vector } from './load.js';

const DATABASE_TIMEOUT_MS = 2000;

let primary: LocalPostgres;
let standby: LocalPostgres | null = null;
let cluster: TestCluster;
let db: pg.Client;
let datasetId = '';

/** A standby streaming from the primary and counted for synchronous commits. */
async function attachStandby(): Promise<LocalPostgres> {
  const s = await startPostgres({ standbyOf: primary });
  await until('the standby to count for synchronous commits', async () => {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum')`);
    return rows[0].n > 0;
  });
  return s;
}

beforeAll(async () => {
  primary = await startPostgres({ settings: { synchronous_commit: 'on' } });
  db = new pg.Client({ connectionString: primary.url });
  await db.connect();
  await db.query(`ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (*)'`);
  await db.query('SELECT pg_reload_conf()');
  standby = await attachStandby();
  cluster = await startCluster({ nodes: 3, postgres: primary, env: { SABLE_DATABASE_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS) } });
  const made = await cluster.call(0)('POST', '/datasets', { name: 'standby-faults', dim: DIM, metric: 'l2' });
  expect(made.status).toBe(201);
  datasetId = made.body.id;
}, 120_000);

afterAll(async () => {
  await db?.end().catch(() => {});
  await cluster?.stop();
  await standby?.stop();
});

describe('cluster faults: the synchronous standby', () => {
  it('F9: the only synchronous standby lost: writes answer 503 in bounded time, searches go on; a new standby brings writes back, nothing acknowledged is lost', async () => {
    const acked = new Acked();
    const insert = (node: number, ids: number[]) =>
      cluster.call(node)('POST', `/datasets/${datasetId}/insert`, { vectors: ids.map((id) => ({ id, values: vector(id), metadata: { n: id } })) });
    for (let b = 0; b < 6; b++) {
      const ids = Array.from({ length: 10 }, (_, k) => 1 + b * 10 + k);
      const r = await until503Passes(() => insert(b % 3, ids));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      acked.upserted(ids);
    }

    await standby!.stop();
    standby = null;
    // Writes: each answers 503 vecstack_router_failed, never hangs. A commit's wait is cut by the
    // client's statement bound (the database timeout + 2 s), and its rollback's as much; a request
    // may first wait as long for a catalog commit of its node in the same state (the read barrier
    // queues behind the node's catalog transactions): four bounds at most.
    const bound = 4 * (DATABASE_TIMEOUT_MS + 2000) + 2000;
    for (const node of [0, 1, 2]) {
      const started = Date.now();
      const r = await insert(node, [1000 + node]).catch((e: Error) => ({ status: 599, body: { error: 'network', message: e.message } }));
      const took = Date.now() - started;
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.body.error).toBe('vecstack_router_failed');
      expect(took).toBeLessThan(bound);
    }
    // Searches go on through every node, past the nodes' leases (1.5 s): renewals commit locally.
    await sleep(2000);
    for (const node of [0, 1, 2]) {
      const s = await cluster.call(node)('POST', `/datasets/${datasetId}/search`, { query: vector(7), top_k: 5 });
      expect(s.status, JSON.stringify(s.body)).toBe(200);
      expect(s.body.results[0].id).toBe(7);
    }

    standby = await attachStandby();
    const after = Array.from({ length: 10 }, (_, k) => 2000 + k);
    const r = await until503Passes(() => insert(1, after), 30_000);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    acked.upserted(after);
    // The writes answered 503 may or may not be in the log (committed locally while waiting):
    // only the acknowledged ones are checked, on every node.
    for (const node of [0, 1, 2]) await checkAcked(cluster, datasetId, acked, node);
  }, 120_000);
});
