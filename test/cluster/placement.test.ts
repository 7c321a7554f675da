// Placement of cluster mode: HRW ranking with zones (cluster/placement.ts), the shard map's
// replica states on a real PostgreSQL (cluster/replica-state.ts, testkit/postgres.ts), and
// the fenced controller that keeps the map in line with the nodes (cluster/controller.ts)
// (design: ../shared/design/cluster.md §3.2, §3.3).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Controller } from '../../dist/cluster/controller.js';
import { fenced, LeaseLostError } from '../../dist/cluster/leases.js';
import { registerNode } from '../../dist/cluster/membership.js';
import { desiredReplicas, hrwRank } from '../../dist/cluster/placement.js';
import {
  clusterDataset,
  createClusterDataset,
  demote,
  dropClusterDataset,
  joinIsr,
  replicasOfNode,
  reportApplied,
  shardMap,
} from '../../dist/cluster/replica-state.js';
import { migrate } from '../../dist/outbound/postgres/migrations.js';
import { openPool, withTransaction, type Pool } from '../../dist/outbound/postgres/pool.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';

let server: LocalPostgres;
let pool: Pool;
const controllers: Controller[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = await startPostgres();
  pool = openPool(server.url, { max: 8, statementTimeoutMs: 5_000 });
  await migrate(pool);
}, 60_000);

afterAll(async () => {
  for (const c of controllers) await c.stop().catch(() => {});
  await pool?.end();
  await server?.stop();
});

// Each database test starts from an empty cluster (the controller's lease included).
beforeEach(async () => {
  for (const c of controllers.splice(0)) await c.stop();
  await pool?.query('TRUNCATE shard_replicas, vector_log, shard_snapshots, shard_heads, cluster_datasets, nodes, leases');
});

/** Polls `check` every 20 ms until it holds, at most `ms`. */
async function waitUntil(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

const three = [
  { id: 'n1', zone: null },
  { id: 'n2', zone: null },
  { id: 'n3', zone: null },
];

async function registerSearchNodes(ids: string[], zone?: string): Promise<void> {
  for (const [i, id] of ids.entries()) {
    await registerNode(pool, { id, address: `127.0.0.${10 + i}:7001`, roles: ['api', 'search'], zone }, 60_000);
  }
}

/** The replicas of a shard in every state, by node: what the map does not show (the dropped ones). */
async function rowsOf(dataset: string, shard: number): Promise<{ node: string; state: string; epoch: number }[]> {
  const { rows } = await pool.query<{ node: string; state: string; epoch: string }>(
    'SELECT node, state, epoch FROM shard_replicas WHERE dataset = $1 AND shard = $2 ORDER BY node',
    [dataset, shard],
  );
  return rows.map((r) => ({ node: r.node, state: r.state, epoch: Number(r.epoch) }));
}

function newController(nodeId: string, opts: { leaseMs: number; intervalMs: number; graceMs: number }): Controller {
  const c = new Controller(pool, nodeId, opts);
  controllers.push(c);
  return c;
}

describe('HRW placement', () => {
  it('is deterministic and independent of the order the nodes are listed in', () => {
    for (let shard = 0; shard < 16; shard++) {
      const a = hrwRank('ds', shard, three);
      expect(hrwRank('ds', shard, three)).toEqual(a);
      expect(hrwRank('ds', shard, [...three].reverse())).toEqual(a);
      expect([...a].sort()).toEqual(['n1', 'n2', 'n3']);
      expect(desiredReplicas('ds', shard, 2, three)).toEqual(a.slice(0, 2));
      expect(desiredReplicas('ds', shard, 5, three)).toEqual(a);
    }
    expect(hrwRank('ds', 0, [])).toEqual([]);
    expect(() => desiredReplicas('ds', 0, 0, three)).toThrow(RangeError);
    expect(() => hrwRank('ds', 0, [three[0]!, three[0]!])).toThrow(RangeError);
  });

  it('spreads 64 shards over 3 nodes roughly evenly (each node first for 20% to 47% of them)', () => {
    for (const dataset of ['ds', 'orders', 'a-much-longer-dataset-name-é']) {
      const firsts = new Map<string, number>();
      for (let shard = 0; shard < 64; shard++) {
        const top = hrwRank(dataset, shard, three)[0]!;
        firsts.set(top, (firsts.get(top) ?? 0) + 1);
      }
      for (const id of ['n1', 'n2', 'n3']) {
        const share = (firsts.get(id) ?? 0) / 64;
        expect(share, `${dataset}: ${id}`).toBeGreaterThanOrEqual(0.2);
        expect(share, `${dataset}: ${id}`).toBeLessThanOrEqual(0.47);
      }
    }
  });

  it('changing one node moves only the shards that involved it', () => {
    const removed = three.filter((n) => n.id !== 'n3');
    const added = [...three, { id: 'n4', zone: null }];
    let movedToNew = 0;
    for (let shard = 0; shard < 64; shard++) {
      const before = hrwRank('ds', shard, three);
      // Removing n3: every other node keeps its relative order, so a shard whose first place was
      // not n3 keeps it.
      const after = hrwRank('ds', shard, removed);
      expect(after).toEqual(before.filter((id) => id !== 'n3'));
      // Adding n4: the old nodes keep their order; a shard changes first place only to n4.
      const grown = hrwRank('ds', shard, added);
      expect(grown.filter((id) => id !== 'n4')).toEqual(before);
      if (grown[0] !== before[0]) {
        expect(grown[0]).toBe('n4');
        movedToNew++;
      }
    }
    // About a quarter of the shards move to the fourth node, and no more.
    expect(movedToNew).toBeGreaterThan(64 * 0.1);
    expect(movedToNew).toBeLessThan(64 * 0.45);
  });

  it('puts distinct zones first, each zone by its best node, the rest in rank order', () => {
    const zoned = [
      { id: 'a1', zone: 'z1' },
      { id: 'a2', zone: 'z1' },
      { id: 'a3', zone: 'z1' },
      { id: 'b1', zone: 'z2' },
    ];
    let b1NotFirst = 0;
    for (let shard = 0; shard < 32; shard++) {
      const plain = hrwRank('ds', shard, zoned.map((n) => ({ id: n.id, zone: null })));
      const ranked = hrwRank('ds', shard, zoned);
      const two = desiredReplicas('ds', shard, 2, zoned);
      expect(two).toContain('b1'); // two replicas: one in each zone
      expect(ranked[0]).toBe(plain[0]); // the best node overall stays first
      // The best z1 node and b1 lead, in rank order; the other z1 nodes follow in rank order.
      const bestZ1 = plain.find((id) => id.startsWith('a'))!;
      expect(ranked.slice(0, 2)).toEqual(plain.filter((id) => id === bestZ1 || id === 'b1'));
      expect(ranked.slice(2)).toEqual(plain.filter((id) => id.startsWith('a') && id !== bestZ1));
      if (plain[0] !== 'b1') b1NotFirst++;
    }
    expect(b1NotFirst).toBeGreaterThan(0); // the reordering was exercised
  });
});

describe('cluster datasets and replica states', () => {
  it('createClusterDataset is idempotent, refuses changed settings; dropClusterDataset removes everything', async () => {
    await createClusterDataset(pool, 'ds', 4, 2);
    await createClusterDataset(pool, 'ds', 4, 2);
    expect(await clusterDataset(pool, 'ds')).toEqual({ shards: 4, replicas: 2 });
    expect(await clusterDataset(pool, 'nope')).toBeNull();
    const map = await shardMap(pool, 'ds');
    expect(map).toEqual([0, 1, 2, 3].map((shard) => ({ shard, lastSeq: 0, replicas: [] })));

    await expect(createClusterDataset(pool, 'ds', 8, 2)).rejects.toThrow(RangeError);
    await expect(createClusterDataset(pool, 'ds', 4, 3)).rejects.toThrow(/exists with 4 shards and 2 replicas/);
    await expect(createClusterDataset(pool, 'other', 0, 1)).rejects.toThrow(RangeError);
    await expect(createClusterDataset(pool, 'other', 1, 17)).rejects.toThrow(RangeError);
    expect(await clusterDataset(pool, 'ds')).toEqual({ shards: 4, replicas: 2 });
    expect((await shardMap(pool, 'ds')).length).toBe(4);
    expect(await clusterDataset(pool, 'other')).toBeNull();

    // Concurrent creations with the same settings both succeed, one set of rows.
    await Promise.all([createClusterDataset(pool, 'race', 3, 1), createClusterDataset(pool, 'race', 3, 1)]);
    expect((await shardMap(pool, 'race')).length).toBe(3);

    await registerSearchNodes(['n1']);
    await pool.query(`INSERT INTO shard_replicas (dataset, shard, node, state, epoch) VALUES ('ds', 0, 'n1', 'active', 1)`);
    await pool.query(`INSERT INTO vector_log (dataset, shard, seq, op, body) VALUES ('ds', 0, 1, 'delete', '\\x00')`);
    await dropClusterDataset(pool, 'ds');
    expect(await clusterDataset(pool, 'ds')).toBeNull();
    expect(await shardMap(pool, 'ds')).toEqual([]);
    expect(await replicasOfNode(pool, 'n1')).toEqual([]);
    expect((await pool.query(`SELECT 1 FROM vector_log WHERE dataset = 'ds'`)).rowCount).toBe(0);
    expect((await shardMap(pool, 'race')).length).toBe(3); // another dataset is untouched
  });

  it('the controller places R=2 replicas of each of 4 shards on 3 live search nodes, as initializing', async () => {
    await registerSearchNodes(['n1', 'n2', 'n3']);
    await registerNode(pool, { id: 'api-only', address: '127.0.0.99:7001', roles: ['api'] }, 60_000);
    await createClusterDataset(pool, 'ds', 4, 2);
    const c = newController('n1', { leaseMs: 2_000, intervalMs: 500, graceMs: 300 });
    const result = await c.reconcile();
    expect(result).toEqual({ leader: true, epoch: 1, added: 8, dropped: 0 });
    expect(c.isLeader()).toBe(true);

    const map = await shardMap(pool, 'ds');
    expect(map.length).toBe(4);
    const perNode = new Map<string, number>();
    for (const { shard, lastSeq, replicas } of map) {
      expect(lastSeq).toBe(0);
      expect(replicas.map((r) => r.node)).toEqual(desiredReplicas('ds', shard, 2, three).sort());
      for (const r of replicas) {
        expect(r).toMatchObject({ state: 'initializing', epoch: 1, appliedSeq: 0, live: true });
        expect(r.address).toMatch(/^127\.0\.0\.1[0-2]:7001$/);
        perNode.set(r.node, (perNode.get(r.node) ?? 0) + 1);
      }
    }
    expect(perNode.has('api-only')).toBe(false);
    const ofN1 = await replicasOfNode(pool, 'n1');
    expect(ofN1.length).toBe(perNode.get('n1') ?? 0);
    for (const r of ofN1) expect(r).toMatchObject({ dataset: 'ds', state: 'initializing', epoch: 1, appliedSeq: 0 });

    // A second pass has nothing to do.
    expect(await c.reconcile()).toEqual({ leader: true, epoch: 1, added: 0, dropped: 0 });
  });

  it('joinIsr refuses while behind the head, accepts when caught up, and no write slips in between', async () => {
    await registerSearchNodes(['n1', 'n2', 'n3']);
    await createClusterDataset(pool, 'ds', 1, 2);
    const c = newController('n1', { leaseMs: 2_000, intervalMs: 500, graceMs: 300 });
    expect((await c.reconcile()).added).toBe(2);
    const [a, b] = desiredReplicas('ds', 0, 2, three) as [string, string];
    await pool.query(`UPDATE shard_heads SET last_seq = 5 WHERE dataset = 'ds' AND shard = 0`);

    expect(await joinIsr(pool, 'ds', 0, a, 4)).toEqual({ joined: false, lastSeq: 5 });
    expect((await shardMap(pool, 'ds'))[0]!.replicas.find((r) => r.node === a)).toMatchObject({ state: 'initializing', appliedSeq: 4 });
    expect(await reportApplied(pool, 'ds', 0, a, 3)).toBe(true); // an older report does not move it back
    expect((await replicasOfNode(pool, a))[0]!.appliedSeq).toBe(4);
    expect(await reportApplied(pool, 'ds', 0, 'nobody', 3)).toBe(false);
    expect(await joinIsr(pool, 'ds', 0, a, 5)).toEqual({ joined: true, lastSeq: 5 });
    expect(await joinIsr(pool, 'ds', 0, a, 5)).toEqual({ joined: true, lastSeq: 5 }); // already active
    expect(await joinIsr(pool, 'ds', 0, 'n-unknown', 5)).toEqual({ joined: false, lastSeq: 5 });

    // A write holding the head lock: b's join (caught up with 5) waits for it, then sees seq 6.
    let joinDone = false;
    let join: Promise<{ joined: boolean; lastSeq: number }> | undefined;
    await withTransaction(pool, async (client) => {
      await client.query(`UPDATE shard_heads SET last_seq = last_seq + 1 WHERE dataset = 'ds' AND shard = 0`);
      join = joinIsr(pool, 'ds', 0, b, 5).finally(() => (joinDone = true));
      await sleep(200);
      expect(joinDone).toBe(false);
    });
    expect(await join).toEqual({ joined: false, lastSeq: 6 });
    expect(await joinIsr(pool, 'ds', 0, b, 6)).toEqual({ joined: true, lastSeq: 6 });

    // Demotion only at the epoch read; a stale replica catches up and joins again.
    const entry = (await shardMap(pool, 'ds'))[0]!.replicas.find((r) => r.node === b)!;
    expect(entry).toMatchObject({ state: 'active', appliedSeq: 6 });
    expect(await demote(pool, 'ds', 0, b, entry.epoch + 1)).toBe(false);
    expect(await demote(pool, 'ds', 0, b, entry.epoch)).toBe(true);
    expect(await demote(pool, 'ds', 0, b, entry.epoch)).toBe(false); // no longer active
    expect((await replicasOfNode(pool, b))[0]!.state).toBe('stale');
    // The controller keeps a stale replica on a desired node as it is.
    expect(await c.reconcile()).toMatchObject({ leader: true, added: 0, dropped: 0 });
    expect((await replicasOfNode(pool, b))[0]!.state).toBe('stale');
    expect(await joinIsr(pool, 'ds', 0, b, 6)).toEqual({ joined: true, lastSeq: 6 });
  });

  it('a node dead past the grace loses its replicas once another is active; replacements go to the third node', async () => {
    await registerSearchNodes(['n1', 'n2', 'n3']);
    await createClusterDataset(pool, 'ds', 8, 2);
    const c = newController('n1', { leaseMs: 2_000, intervalMs: 500, graceMs: 300 });
    expect((await c.reconcile()).added).toBe(16);

    // The dead node: the one holding the most replicas, so several shards are involved.
    const holders = new Map<string, number[]>();
    for (let shard = 0; shard < 8; shard++) {
      for (const id of desiredReplicas('ds', shard, 2, three)) holders.set(id, [...(holders.get(id) ?? []), shard]);
    }
    const [dead, itsShards] = [...holders.entries()].sort((x, y) => y[1].length - x[1].length)[0]!;
    expect(itsShards.length).toBeGreaterThanOrEqual(2);
    const [onlyActive, ...bothActive] = itsShards as [number, ...number[]];
    const otherOf = (shard: number) => desiredReplicas('ds', shard, 2, three).find((id) => id !== dead)!;
    const thirdOf = (shard: number) => three.map((n) => n.id).find((id) => id !== dead && id !== otherOf(shard))!;
    // Shard onlyActive: only the dead node's replica is active. The others: both are.
    await joinIsr(pool, 'ds', onlyActive, dead, 0);
    for (const shard of bothActive) {
      await joinIsr(pool, 'ds', shard, dead, 0);
      await joinIsr(pool, 'ds', shard, otherOf(shard), 0);
    }

    // Its lease lapses: within the grace nothing moves.
    await pool.query('UPDATE nodes SET lease_until = now() WHERE id = $1', [dead]);
    expect(await c.reconcile()).toMatchObject({ leader: true, added: 0, dropped: 0 });
    const live = (await shardMap(pool, 'ds'))[onlyActive]!.replicas.find((r) => r.node === dead)!;
    expect(live).toMatchObject({ state: 'active', live: false });

    await sleep(400);
    const pass = await c.reconcile();
    expect(pass).toMatchObject({ leader: true, added: itsShards.length, dropped: bothActive.length });
    for (const shard of bothActive) {
      expect(await rowsOf('ds', shard)).toEqual(
        [
          { node: dead, state: 'dropped', epoch: pass.epoch },
          { node: otherOf(shard), state: 'active', epoch: 1 },
          { node: thirdOf(shard), state: 'initializing', epoch: pass.epoch },
        ].sort((x, y) => (x.node < y.node ? -1 : 1)),
      );
    }
    // The last active replica stays, with a replacement placed, until another replica is active.
    const states = async () => Object.fromEntries((await rowsOf('ds', onlyActive)).map((r) => [r.node, r.state]));
    expect(await states()).toEqual({ [dead]: 'active', [otherOf(onlyActive)]: 'initializing', [thirdOf(onlyActive)]: 'initializing' });
    expect(await joinIsr(pool, 'ds', onlyActive, otherOf(onlyActive), 0)).toEqual({ joined: true, lastSeq: 0 });
    expect(await c.reconcile()).toMatchObject({ leader: true, added: 0, dropped: 1 });
    expect(await states()).toEqual({ [dead]: 'dropped', [otherOf(onlyActive)]: 'active', [thirdOf(onlyActive)]: 'initializing' });
    expect((await replicasOfNode(pool, dead)).length).toBe(0);

    // The node comes back: it is desired again (its dropped rows start over); the replacements
    // are dropped only once the desired nodes carry the shard with 2 active replicas.
    await pool.query(`UPDATE nodes SET lease_until = now() + interval '60 s' WHERE id = $1`, [dead]);
    expect(await c.reconcile()).toMatchObject({ added: itsShards.length, dropped: 0 });
    const shard = onlyActive;
    expect(await joinIsr(pool, 'ds', shard, thirdOf(shard), 0)).toEqual({ joined: true, lastSeq: 0 });
    expect(await c.reconcile()).toMatchObject({ added: 0, dropped: 0 }); // the third node is active but not desired
    expect(await joinIsr(pool, 'ds', shard, dead, 0)).toEqual({ joined: true, lastSeq: 0 });
    expect(await c.reconcile()).toMatchObject({ added: 0, dropped: 1 });
    expect(Object.fromEntries((await rowsOf('ds', shard)).map((r) => [r.node, r.state]))).toEqual({
      [dead]: 'active',
      [otherOf(shard)]: 'active',
      [thirdOf(shard)]: 'dropped',
    });
  });
});

describe('controller leadership', () => {
  it('a deposed controller cannot write: its pass reports leader false, its fenced transaction fails', async () => {
    await registerSearchNodes(['n1', 'n2', 'n3']);
    const old = newController('n1', { leaseMs: 300, intervalMs: 100, graceMs: 10_000 });
    const next = newController('n2', { leaseMs: 2_000, intervalMs: 500, graceMs: 10_000 });
    const first = await old.reconcile();
    expect(first).toMatchObject({ leader: true, epoch: 1 });
    expect(await next.reconcile()).toEqual({ leader: false, epoch: null, added: 0, dropped: 0 });

    await sleep(350); // old's lease lapses (it did not pass meanwhile); next takes over
    expect(old.isLeader()).toBe(false);
    await createClusterDataset(pool, 'ds', 2, 1);
    expect(await next.reconcile()).toEqual({ leader: true, epoch: 2, added: 2, dropped: 0 });
    expect(await old.reconcile()).toEqual({ leader: false, epoch: null, added: 0, dropped: 0 });
    expect(old.isLeader()).toBe(false);
    const err = await withTransaction(pool, (client) => fenced(client, 'controller', first.epoch!)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseLostError);
    for (const shard of [0, 1]) for (const r of await rowsOf('ds', shard)) expect(r.epoch).toBe(2);
  });

  it('two controllers started together: exactly one leads, and the other takes over when it stops', async () => {
    await registerSearchNodes(['n1', 'n2']);
    await createClusterDataset(pool, 'ds', 2, 2);
    const a = newController('n1', { leaseMs: 400, intervalMs: 100, graceMs: 10_000 });
    const b = newController('n2', { leaseMs: 400, intervalMs: 100, graceMs: 10_000 });
    a.start();
    b.start();
    await waitUntil(() => a.isLeader() || b.isLeader(), 3_000, 'a leader');
    // Over a dozen lease renewals, never two leaders, never a change of leader.
    const leader = a.isLeader() ? a : b;
    const follower = leader === a ? b : a;
    for (let i = 0; i < 30; i++) {
      expect(leader.isLeader()).toBe(true);
      expect(follower.isLeader()).toBe(false);
      await sleep(40);
    }
    expect(leader.lastError).toBeNull();
    expect((await shardMap(pool, 'ds')).flatMap((s) => s.replicas).length).toBe(4);

    await leader.stop(); // releases the lease: the other takes over at its next pass
    await waitUntil(() => follower.isLeader(), 2_000, 'the takeover');
    expect(leader.isLeader()).toBe(false);
    const { rows } = await pool.query<{ holder: string; epoch: string }>(`SELECT holder, epoch FROM leases WHERE name = 'controller'`);
    expect(rows[0]!.holder).toBe(follower.nodeId);
    expect(Number(rows[0]!.epoch)).toBe(2);
  });
});
