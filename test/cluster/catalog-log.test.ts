// The replicated catalog of cluster mode on a real PostgreSQL: each node's control.mdb is a cache
// of catalog_log (cluster/catalog-log.ts). Records written on one node reach the others;
// check-then-put transactions are serialized across nodes; a transaction whose log commit fails
// is undone locally; a process that died between its two commits settles at the next start; a
// new node rebuilds the whole catalog; the job queue's databases stay node-local.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlStore, type OrgRecord } from '../../dist/catalog/store.js';
import { CatalogLog, encodeChanges } from '../../dist/cluster/catalog-log.js';
import { Notifications } from '../../dist/cluster/notifications.js';
import { createKey, ensureOrg, lookupKey } from '../../dist/control-plane/auth/keys.js';
import { migrate } from '../../dist/outbound/postgres/migrations.js';
import { openPool, type Pool } from '../../dist/outbound/postgres/pool.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';

let server: LocalPostgres;
let pool: Pool;
const dirs: string[] = [];
const nodes: { store: ControlStore; log: CatalogLog; notifications: Notifications }[] = [];

async function startNode(id: string, dir = mkdtempSync(join(tmpdir(), `sable-catalog-${id}-`)), checkpointEvery?: number) {
  dirs.push(dir);
  const store = new ControlStore(dir);
  const notifications = new Notifications(server.url);
  const log = new CatalogLog(store, { pool, notifications, nodeId: id, pollMs: 200, ...(checkpointEvery ? { checkpointEvery } : {}) });
  await log.start();
  const node = { store, log, notifications, dir };
  nodes.push(node);
  return node;
}

async function stopNode(n: { store: ControlStore; log: CatalogLog; notifications: Notifications }) {
  await n.log.stop();
  await n.notifications.close();
  await n.store.close();
  nodes.splice(nodes.indexOf(n), 1);
}

async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  server = await startPostgres();
  pool = openPool(server.url, { max: 8 });
  await migrate(pool);
}, 60_000);

afterAll(async () => {
  for (const n of [...nodes]) await stopNode(n).catch(() => {});
  await pool?.end();
  await server?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('catalog log', () => {
  it('an org and a key created on one node authenticate on another, by notification; a revocation follows', async () => {
    const a = await startNode('a');
    const b = await startNode('b');
    const org = await ensureOrg(a.store, 'acme');
    const { key, record } = await createKey(a.store, org.id, 'admin');
    await eventually(() => lookupKey(b.store, key) !== undefined, 3000);
    expect(lookupKey(b.store, key)).toMatchObject({ key_id: record.key_id, org_id: org.id, role: 'admin' });
    expect(b.store.orgs.get(org.id)).toEqual(org);
    // A lone put and a lone remove (outside store.write) are catalog transactions too.
    const other: OrgRecord = { id: 'org-lone', name: 'lone', created_at: new Date().toISOString() };
    await b.store.orgs.put(other.id, other);
    await eventually(() => a.store.orgs.get('org-lone') !== undefined);
    expect(await a.store.orgs.remove('org-lone')).toBe(true);
    await eventually(() => b.store.orgs.get('org-lone') === undefined);
    await b.log.sync();
    expect(a.log.applied).toBe(b.log.applied);
  });

  it('check-then-put transactions on two nodes at once: exactly one takes a name', async () => {
    const [a, b] = nodes;
    const claim = (n: (typeof nodes)[number], id: string) =>
      n.store.write(() => {
        for (const { value } of n.store.orgs.getRange()) if (value.name === 'contested') throw new Error(`taken by ${value.id}`);
        n.store.orgs.put(id, { id, name: 'contested', created_at: new Date().toISOString() });
        return id;
      });
    for (let round = 0; round < 5; round++) {
      const name = `contested`;
      const outcomes = await Promise.allSettled([claim(a!, `x${round}`), claim(b!, `y${round}`)]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      // The loser saw the winner's record (it waited on the head lock, then caught up): it
      // answers as a taken name does on one node, not with a failed commit.
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(lost).toHaveLength(1);
      expect(lost[0]!.reason.message).toMatch(/^taken by [xy]\d$/);
      await a!.log.sync();
      await b!.log.sync();
      const holders = (s: ControlStore) => [...s.orgs.getRange()].filter((e) => e.value.name === name).map((e) => e.key);
      expect(holders(a!.store)).toHaveLength(1);
      expect(holders(b!.store)).toEqual(holders(a!.store));
      await a!.store.write(() => {
        for (const k of holders(a!.store)) a!.store.orgs.remove(k);
      });
    }
  });

  it('a transaction whose log entry cannot commit is undone locally and answers 503 vecstack_router_failed', async () => {
    const [a, b] = nodes;
    await a!.store.orgs.put('keep', { id: 'keep', name: 'before', created_at: 'then' });
    await b!.log.sync();
    // Someone else's row already holds the next seq (the head was not bumped): the INSERT fails.
    const { rows } = await pool.query('SELECT last_seq FROM catalog_head');
    const next = Number(rows[0].last_seq) + 1;
    await pool.query('INSERT INTO catalog_log (seq, node, changes) VALUES ($1, $2, $3)', [next, 'intruder', encodeChanges([])]);
    const err = await a!.store
      .write(() => {
        a!.store.orgs.put('keep', { id: 'keep', name: 'after', created_at: 'now' });
        a!.store.orgs.put('fresh', { id: 'fresh', name: 'fresh', created_at: 'now' });
      })
      .catch((e) => e);
    expect(err.code).toBe('vecstack_router_failed');
    expect(a!.store.orgs.get('keep')).toMatchObject({ name: 'before' });
    expect(a!.store.orgs.get('fresh')).toBeUndefined();
    await pool.query('DELETE FROM catalog_log WHERE seq = $1', [next]);
    // The node goes on: the next transaction commits and reaches the other node.
    await a!.store.orgs.put('keep', { id: 'keep', name: 'after', created_at: 'now' });
    await eventually(() => b!.store.orgs.get('keep')?.name === 'after');
  });

  it('a process that died between its LMDB commit and its log commit: undone at the next start, or kept when the log has it', async () => {
    const a = nodes[0]!;
    const dir = (a as unknown as { dir: string }).dir;
    await stopNode(a);
    // The crash, reproduced: a local change with its pending mark, the log without the entry.
    const { rows } = await pool.query('SELECT last_seq FROM catalog_head');
    const head = Number(rows[0].last_seq);
    let store = new ControlStore(dir);
    const meta = store.open<unknown, string>('catalogMeta');
    await store.write(() => {
      store.orgs.put('ghost', { id: 'ghost', name: 'ghost', created_at: 'x' });
      meta.put('pending', { seq: head + 1, undo: encodeChanges([{ db: 'orgs', key: 'ghost' }]) });
    });
    await store.close();
    const restarted = await startNode('a', dir);
    expect(restarted.store.orgs.get('ghost')).toBeUndefined();
    expect(restarted.log.applied).toBe(head);

    // The other case: the entry did commit (seq and node match), the mark was not cleared.
    await restarted.store.orgs.put('real', { id: 'real', name: 'real', created_at: 'x' });
    const applied = restarted.log.applied;
    await stopNode(restarted);
    store = new ControlStore(dir);
    await store.open<unknown, string>('catalogMeta').put('pending', { seq: applied, undo: encodeChanges([{ db: 'orgs', key: 'real' }]) });
    await store.open<unknown, string>('catalogMeta').put('applied', applied - 1);
    await store.close();
    const again = await startNode('a', dir);
    expect(again.store.orgs.get('real')).toMatchObject({ name: 'real' });
    expect(again.log.applied).toBe(applied);
  });

  it('a new node rebuilds the whole catalog from the log; the job queue stays node-local', async () => {
    const [a] = nodes;
    await a!.store.open<unknown, string>('jobs').put('job-1', { local: true });
    const c = await startNode('c');
    expect([...c.store.orgs.getRange()].map((e) => e.key).sort()).toEqual([...a!.store.orgs.getRange()].map((e) => e.key).sort());
    expect([...c.store.keys.getRange()]).toHaveLength(1);
    expect(c.store.open('jobs').get('job-1')).toBeUndefined();
    expect(c.log.applied).toBe(a!.log.applied);
  });

  it('a checkpoint truncates the log; a new node loads it and replays the rest; a node stopped before it catches up through it', async () => {
    const a = nodes[0]!;
    const lagging = nodes.find((n) => n !== a)!;
    const laggingDir = (lagging as unknown as { dir: string }).dir;
    await stopNode(lagging);
    // Changes the lagging node misses: puts, and a removal of a record it holds.
    for (let i = 0; i < 30; i++) await a.store.orgs.put(`bulk-${i}`, { id: `bulk-${i}`, name: `bulk ${i}`, created_at: 'x' });
    expect(await a.store.orgs.remove('keep')).toBe(true);
    const small = await a.log.checkpoint();
    expect(small).toBeNull(); // fewer entries than checkpointEvery (10,000) since the newest
    const seq = await a.log.checkpoint(true);
    expect(seq).toBe(a.log.applied);
    const left = await pool.query('SELECT count(*)::int AS n FROM catalog_log WHERE seq <= $1', [seq]);
    expect(left.rows[0].n).toBe(0);
    await a.store.orgs.put('after', { id: 'after', name: 'after the checkpoint', created_at: 'x' });
    const expected = [...a.store.orgs.getRange()].map((e) => e.key).sort();
    // A node with an empty copy: the checkpoint, then the entry after it.
    const fresh = await startNode('e');
    expect([...fresh.store.orgs.getRange()].map((e) => e.key).sort()).toEqual(expected);
    expect(fresh.log.applied).toBe(a.log.applied);
    // The node that stopped before: its copy is replaced by the checkpoint (the removal holds).
    const back = await startNode('b', laggingDir);
    expect([...back.store.orgs.getRange()].map((e) => e.key).sort()).toEqual(expected);
    expect(back.store.orgs.get('keep')).toBeUndefined();
    // Transactions go on on every node.
    await back.store.orgs.put('from-b', { id: 'from-b', name: 'b', created_at: 'x' });
    await eventually(() => a.store.orgs.get('from-b') !== undefined && fresh.store.orgs.get('from-b') !== undefined);
  });
});
