/**
 * The controller of cluster mode (design: ../shared/design/cluster.md §3.2 "Placement",
 * "Liveness"): whoever holds `leases('controller')` keeps the shard map (`shard_replicas`) in
 * line with the nodes. Every node may run one; the lease makes one of them act.
 *
 * Each pass renews (or takes) the lease, then, in one transaction opened by `fenced` (the lease
 * row FOR SHARE at the controller's epoch), reads the nodes, the cluster datasets and the
 * replicas, and writes the difference, tagging every row it writes with its epoch. A deposed
 * controller's pass is therefore refused whole, and a takeover waits for a pass in flight to
 * commit, so the terms' writes never interleave.
 *
 * Placement is HRW over the search nodes that are members: live, or dead for less than the grace.
 * A node that misses heartbeats briefly (a restart, a pause) keeps its replicas and its places,
 * and nothing is copied elsewhere; past the grace its replicas move. What moves never leaves a
 * shard without its data: a dead node's last active replica is kept until another replica is
 * active (writes needing it fail loudly meanwhile), and a live replica that is no longer desired
 * is dropped only once the desired nodes hold `replicas` active ones.
 */
import { withTransaction, type Pool, type PoolClient } from '../outbound/postgres/pool.js';
import { acquireLease, checkLeaseMs, fenced, LeaseLostError, releaseLease, renewLease } from './leases.js';
import { desiredReplicas, type PlacementNode } from './placement.js';
import type { ReplicaState } from './replica-state.js';

/** The name of the controller's lease. */
export const CONTROLLER_LEASE = 'controller';

export interface ControllerOptions {
  /** The lease each pass takes or renews. */
  leaseMs: number;
  /** Time between passes (less than leaseMs, so the leader renews before its lease ends). */
  intervalMs: number;
  /** How long past its lease a node keeps its replicas (the design: 20 s). */
  graceMs: number;
  /** Called after a pass that changed the shard map (the node tells the search nodes at once). */
  onChange?: (result: ReconcileResult) => void;
}

export interface ReconcileResult {
  /** This controller held the lease for the whole pass, and its writes committed. */
  leader: boolean;
  /** The lease's epoch of the pass, null when not leader. */
  epoch: number | null;
  /** Replicas assigned: inserted as 'initializing', or brought back from 'dropped'. */
  added: number;
  /** Replicas set to 'dropped'. */
  dropped: number;
}

interface NodeRow {
  id: string;
  zone: string | null;
  search: boolean;
  /** Dead for longer than the grace. */
  gone: boolean;
}

interface ReplicaRow {
  dataset: string;
  shard: number;
  node: string;
  state: Exclude<ReplicaState, 'dropped'>;
}

interface Changes {
  add: { dataset: string; shard: number; node: string }[];
  drop: { dataset: string; shard: number; node: string }[];
}

export class Controller {
  private readonly leaseMs: number;
  private readonly intervalMs: number;
  private readonly graceMs: number;
  private epoch: number | null = null;
  /** performance.now() past which this controller no longer counts itself leader (its lease may have ended). */
  private leaderUntil = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly onChange: ControllerOptions['onChange'];
  /** Why the last timed pass failed (the database away, ...), cleared by a pass that succeeds. */
  lastError: Error | null = null;

  constructor(
    private readonly pool: Pool,
    readonly nodeId: string,
    opts: ControllerOptions,
  ) {
    checkLeaseMs(opts.leaseMs);
    if (!(opts.intervalMs > 0 && opts.intervalMs < opts.leaseMs)) {
      throw new RangeError(`the controller passes more often than its lease lasts (interval ${opts.intervalMs} ms, lease ${opts.leaseMs} ms)`);
    }
    if (!(Number.isFinite(opts.graceMs) && opts.graceMs >= 0)) throw new RangeError(`the grace is a finite number of milliseconds, at least 0 (got ${opts.graceMs})`);
    this.leaseMs = opts.leaseMs;
    this.intervalMs = opts.intervalMs;
    this.graceMs = opts.graceMs;
    this.onChange = opts.onChange;
  }

  /** Runs a pass now, then one every intervalMs (timed from the end of the previous) until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    const tick = (): void => {
      void this.reconcile()
        .then(
          () => (this.lastError = null),
          (err: unknown) => (this.lastError = err instanceof Error ? err : new Error(String(err))),
        )
        .finally(() => {
          if (!this.running) return;
          this.timer = setTimeout(tick, this.intervalMs);
          this.timer.unref();
        });
    };
    tick();
  }

  /** Stops the timer, waits for a pass in flight, and gives the lease up so another node takes over at once. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.chain;
    const epoch = this.epoch;
    this.epoch = null;
    if (epoch !== null) await releaseLease(this.pool, CONTROLLER_LEASE, this.nodeId, epoch).catch(() => false);
  }

  /**
   * Whether this controller holds the lease: it took or renewed it, and less than leaseMs has
   * passed since that renewal was sent (so a controller cut from the database stops counting
   * itself leader no later than the database stops counting it).
   */
  isLeader(): boolean {
    return this.epoch !== null && performance.now() < this.leaderUntil;
  }

  /** One pass (passes never overlap: a call made during one runs after it). */
  reconcile(): Promise<ReconcileResult> {
    const run = this.chain.then(() => this.pass());
    this.chain = run.catch(() => {});
    return run;
  }

  private async pass(): Promise<ReconcileResult> {
    const notLeader: ReconcileResult = { leader: false, epoch: null, added: 0, dropped: 0 };
    const sentAt = performance.now();
    if (this.epoch !== null && !(await renewLease(this.pool, CONTROLLER_LEASE, this.nodeId, this.epoch, this.leaseMs))) {
      this.epoch = null;
    }
    if (this.epoch === null) {
      // Free, expired (ours included: a new term), or another's: then null.
      const term = await acquireLease(this.pool, CONTROLLER_LEASE, this.nodeId, this.leaseMs);
      if (term === null) return notLeader;
      this.epoch = term.epoch;
    }
    this.leaderUntil = sentAt + this.leaseMs;
    const epoch = this.epoch;
    try {
      const { added, dropped } = await withTransaction(this.pool, async (client) => {
        await fenced(client, CONTROLLER_LEASE, epoch);
        return this.place(client, epoch);
      });
      const result = { leader: true, epoch, added, dropped };
      if (added + dropped > 0) this.onChange?.(result);
      return result;
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err;
      if (this.epoch === epoch) this.epoch = null;
      return notLeader;
    }
  }

  /** Reads the cluster and writes the shard map's difference, on the fenced transaction. */
  private async place(client: PoolClient, epoch: number): Promise<{ added: number; dropped: number }> {
    const nodes = await client.query<NodeRow>(
      `SELECT id, zone, 'search' = ANY (roles) AS search, lease_until < now() - $1::double precision * interval '1 millisecond' AS gone
         FROM nodes ORDER BY id`,
      [this.graceMs],
    );
    // Shared locks: a dataset being dropped (its row locked FOR UPDATE) is waited for, and then
    // not seen; one not yet dropped cannot be while replicas are placed for it.
    const datasets = await client.query<{ dataset: string; shards: number; replicas: number }>(
      'SELECT dataset, shards, replicas FROM cluster_datasets ORDER BY dataset FOR SHARE',
    );
    // Locked: a replica joining the ISR or being demoted meanwhile must not be overwritten by a
    // decision made on its old state (the "last active replica" rule reads these states).
    const replicas = await client.query<ReplicaRow>(
      `SELECT dataset, shard, node, state FROM shard_replicas WHERE state <> 'dropped' ORDER BY dataset, shard, node FOR UPDATE`,
    );

    const byId = new Map(nodes.rows.map((n) => [n.id, n]));
    const members: PlacementNode[] = nodes.rows.filter((n) => n.search && !n.gone).map((n) => ({ id: n.id, zone: n.zone }));
    const byShard = new Map<string, ReplicaRow[]>();
    for (const r of replicas.rows) {
      const key = `${r.dataset}\u0000${r.shard}`;
      let list = byShard.get(key);
      if (!list) byShard.set(key, (list = []));
      list.push(r);
    }

    const changes: Changes = { add: [], drop: [] };
    for (const { dataset, shards, replicas: factor } of datasets.rows) {
      for (let shard = 0; shard < shards; shard++) {
        const rows = byShard.get(`${dataset}\u0000${shard}`) ?? [];
        const desired = new Set(desiredReplicas(dataset, shard, factor, members));
        for (const node of desired) {
          if (!rows.some((r) => r.node === node)) changes.add.push({ dataset, shard, node });
        }
        const gone = (r: ReplicaRow): boolean => byId.get(r.node)?.gone ?? true;
        const activeKept = rows.filter((r) => r.state === 'active' && !gone(r)).length;
        const activeDesired = rows.filter((r) => r.state === 'active' && desired.has(r.node)).length;
        for (const r of rows) {
          const drop = gone(r)
            ? r.state !== 'active' || activeKept > 0 // keep a dead node's active replica while no other is active
            : !desired.has(r.node) && activeDesired >= factor; // an extra replica goes once the desired ones carry the shard
          if (drop) changes.drop.push({ dataset, shard, node: r.node });
        }
      }
    }

    let added = 0;
    let dropped = 0;
    if (changes.add.length > 0) {
      // A desired node with a 'dropped' row starts over (its copy was discarded, so applied_seq
      // is 0 again); a 'stale' one is not in changes.add: it keeps its copy, catches up and joins.
      const res = await client.query(
        `INSERT INTO shard_replicas (dataset, shard, node, state, epoch)
           SELECT d, s, n, 'initializing', $4 FROM unnest($1::text[], $2::int[], $3::text[]) AS t(d, s, n)
         ON CONFLICT (dataset, shard, node) DO UPDATE SET state = 'initializing', epoch = EXCLUDED.epoch, applied_seq = 0, updated_at = now()
           WHERE shard_replicas.state = 'dropped'`,
        [changes.add.map((c) => c.dataset), changes.add.map((c) => c.shard), changes.add.map((c) => c.node), epoch],
      );
      added = res.rowCount ?? 0;
    }
    if (changes.drop.length > 0) {
      const res = await client.query(
        `UPDATE shard_replicas r SET state = 'dropped', epoch = $4, updated_at = now()
           FROM unnest($1::text[], $2::int[], $3::text[]) AS t(d, s, n)
          WHERE r.dataset = t.d AND r.shard = t.s AND r.node = t.n AND r.state <> 'dropped'`,
        [changes.drop.map((c) => c.dataset), changes.drop.map((c) => c.shard), changes.drop.map((c) => c.node), epoch],
      );
      dropped = res.rowCount ?? 0;
    }
    return { added, dropped };
  }
}
