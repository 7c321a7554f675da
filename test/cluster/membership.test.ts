// Membership and named leases of cluster mode on a real PostgreSQL (testkit/postgres.ts):
// node leases on the database's clock, heartbeats and self-fencing when the database is gone, and
// lease takeover with fencing epochs (design: ../shared/design/cluster.md §3.2, §3.6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireLease, fenced, LeaseLostError, releaseLease, renewLease } from '../../dist/cluster/leases.js';
import { Heartbeat, heartbeat, liveNodes, registerNode } from '../../dist/cluster/membership.js';
import { migrate } from '../../dist/outbound/postgres/migrations.js';
import { openPool, withTransaction, type Pool } from '../../dist/outbound/postgres/pool.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';

let server: LocalPostgres;
let pool: Pool;
const cleanups: (() => Promise<void>)[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = await startPostgres();
  pool = openPool(server.url, { max: 6 });
  await migrate(pool);
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
  await pool?.end();
  await server?.stop();
});

const liveIds = async () => (await liveNodes(pool)).map((n) => n.id);

describe('membership', () => {
  it('a registered node is live until its lease passes without heartbeats; heartbeats keep it live', async () => {
    await registerNode(pool, { id: 'n1', address: '127.0.0.2:7001', roles: ['api', 'search'], zone: 'z1', capacityBytes: 2 ** 33 }, 400);
    await registerNode(pool, { id: 'n2', address: '127.0.0.3:7001', roles: ['search'] }, 400);
    const live = await liveNodes(pool);
    expect(live.map((n) => n.id)).toEqual(['n1', 'n2']);
    expect(live[0]).toMatchObject({ address: '127.0.0.2:7001', roles: ['api', 'search'], zone: 'z1', capacityBytes: 2 ** 33 });
    expect(live[1]).toMatchObject({ zone: null, capacityBytes: null });

    // n1 heartbeats every 100 ms, n2 does not: after 700 ms only n1 is live.
    for (let i = 0; i < 7; i++) {
      await sleep(100);
      expect(await heartbeat(pool, 'n1', 400)).toBe(true);
    }
    expect(await liveIds()).toEqual(['n1']);
    // An unknown node's heartbeat finds no row; re-registering n2 makes it live again.
    expect(await heartbeat(pool, 'nobody', 400)).toBe(false);
    await registerNode(pool, { id: 'n2', address: '127.0.0.3:7002', roles: ['search'] }, 400);
    expect(await liveIds()).toEqual(['n1', 'n2']);
    await sleep(450);
    expect(await liveIds()).toEqual([]);
  });

  it('the Heartbeat class keeps a node live, and stop() lets its lease lapse', async () => {
    await registerNode(pool, { id: 'hb', address: '127.0.0.4:7001', roles: ['search'] }, 400);
    const hb = new Heartbeat(pool, 'hb', { intervalMs: 100, leaseMs: 400, marginMs: 100 });
    expect(await hb.start()).toBe(true);
    await sleep(900);
    expect(hb.serving()).toBe(true);
    expect(await liveIds()).toContain('hb');
    await hb.stop();
    expect(hb.serving()).toBe(false);
    await sleep(450);
    expect(await liveIds()).not.toContain('hb');
  });

  it('serving() turns false at lastOk + lease - margin once the database cannot be reached', async () => {
    const other = await startPostgres();
    const otherPool = openPool(other.url, { max: 2, connectTimeoutMs: 300, statementTimeoutMs: 300 });
    cleanups.push(() => other.stop(), () => otherPool.end());
    await migrate(otherPool);
    await registerNode(otherPool, { id: 'cut', address: '127.0.0.5:7001', roles: ['search'] }, 800);
    const hb = new Heartbeat(otherPool, 'cut', { intervalMs: 100, leaseMs: 800, marginMs: 200 });
    cleanups.push(() => hb.stop());
    expect(await hb.start()).toBe(true);
    await sleep(300);
    expect(hb.serving()).toBe(true);

    await other.stop(); // the database is gone (pg_ctl stop -m immediate)
    const lastOk = hb.lastOk!;
    const deadline = lastOk + 800 - 200;
    // It keeps serving up to its deadline, and stops there.
    while (performance.now() < deadline - 20) {
      expect(hb.serving()).toBe(true);
      await sleep(20);
    }
    await sleep(40);
    expect(hb.serving()).toBe(false);
    expect(hb.lastOk).toBe(lastOk); // no renewal succeeded after the cut
    await hb.stop();
  });
});

describe('named leases', () => {
  it('of two concurrent contenders exactly one wins, on a new lease and on an expired one (10 rounds each)', async () => {
    for (let round = 0; round < 10; round++) {
      const name = `race-new-${round}`;
      const results = await Promise.all([acquireLease(pool, name, 'a', 500), acquireLease(pool, name, 'b', 500)]);
      expect(results.filter((r) => r !== null)).toEqual([{ epoch: 1 }]);
    }
    // Expired leases: all 10 at epoch 1 under 'x', expired; then the same race on each.
    for (let round = 0; round < 10; round++) expect(await acquireLease(pool, `race-old-${round}`, 'x', 50)).toEqual({ epoch: 1 });
    await sleep(100);
    for (let round = 0; round < 10; round++) {
      const name = `race-old-${round}`;
      const results = await Promise.all([acquireLease(pool, name, 'a', 500), acquireLease(pool, name, 'b', 500)]);
      expect(results.filter((r) => r !== null)).toEqual([{ epoch: 2 }]);
      const { rows } = await pool.query('SELECT holder FROM leases WHERE name = $1', [name]);
      expect(['a', 'b']).toContain(rows[0].holder);
      expect(results[rows[0].holder === 'a' ? 0 : 1]).toEqual({ epoch: 2 });
    }
  });

  it('the holder renews without a new epoch; a takeover after expiry bumps it; the old holder can no longer renew', async () => {
    expect(await acquireLease(pool, 'ctl', 'a', 300)).toEqual({ epoch: 1 });
    expect(await acquireLease(pool, 'ctl', 'b', 300)).toBeNull(); // live and a's
    expect(await acquireLease(pool, 'ctl', 'a', 300)).toEqual({ epoch: 1 }); // ours: renewed
    expect(await renewLease(pool, 'ctl', 'a', 1, 300)).toBe(true);
    expect(await renewLease(pool, 'ctl', 'a', 0, 300)).toBe(false); // wrong epoch
    await sleep(350);
    expect(await renewLease(pool, 'ctl', 'a', 1, 300)).toBe(false); // expired: re-acquire instead
    expect(await acquireLease(pool, 'ctl', 'b', 300)).toEqual({ epoch: 2 });
    expect(await renewLease(pool, 'ctl', 'a', 1, 300)).toBe(false);
    expect(await renewLease(pool, 'ctl', 'b', 2, 300)).toBe(true);
    // A release frees it at once; the next taker gets a new epoch (so does an expired own lease).
    expect(await releaseLease(pool, 'ctl', 'b', 2)).toBe(true);
    expect(await acquireLease(pool, 'ctl', 'b', 300)).toEqual({ epoch: 3 });
    await expect(acquireLease(pool, 'ctl', 'b', 0)).rejects.toThrow(RangeError);
  });

  it('a write fenced with the old epoch is refused and writes nothing; the new holder goes through', async () => {
    await registerNode(pool, { id: 'r1', address: '127.0.0.6:7001', roles: ['search'] }, 60_000);
    await pool.query(`INSERT INTO shard_heads (dataset, shard) VALUES ('ds', 0)`);
    const assign = (epoch: number, state: string) =>
      withTransaction(pool, async (client) => {
        await fenced(client, 'controller', epoch);
        await client.query(
          `INSERT INTO shard_replicas (dataset, shard, node, state, epoch) VALUES ('ds', 0, 'r1', $1, $2)
           ON CONFLICT (dataset, shard, node) DO UPDATE SET state = EXCLUDED.state, epoch = EXCLUDED.epoch, updated_at = now()`,
          [state, epoch],
        );
      });
    const replicas = async () => (await pool.query(`SELECT state, epoch::int AS epoch FROM shard_replicas WHERE dataset = 'ds'`)).rows;

    const old = (await acquireLease(pool, 'controller', 'a', 300))!;
    await assign(old.epoch, 'initializing');
    await sleep(350);
    const next = (await acquireLease(pool, 'controller', 'b', 2_000))!;
    expect(next.epoch).toBe(old.epoch + 1);

    const err = await assign(old.epoch, 'stale').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseLostError);
    expect((err as Error).message).toBe(
      `The lease 'controller' is no longer held under epoch ${old.epoch} (it expired or another holder took it over): the write made under it was refused.`,
    );
    expect(await replicas()).toEqual([{ state: 'initializing', epoch: old.epoch }]);
    await assign(next.epoch, 'active');
    expect(await replicas()).toEqual([{ state: 'active', epoch: next.epoch }]);
  });

  it('a takeover waits for a fenced write in flight, so the old term commits before the new one starts', async () => {
    const old = (await acquireLease(pool, 'ctl2', 'a', 200))!;
    const order: string[] = [];
    let takeover: Promise<unknown> | undefined;
    await withTransaction(pool, async (client) => {
      await fenced(client, 'ctl2', old.epoch);
      await sleep(300); // the lease expires while the write is in flight
      takeover = acquireLease(pool, 'ctl2', 'b', 2_000).then((r) => {
        order.push('takeover');
        return r;
      });
      await sleep(200);
      order.push('old write commits');
    });
    expect(await takeover).toEqual({ epoch: old.epoch + 1 });
    expect(order).toEqual(['old write commits', 'takeover']);
  });
});
