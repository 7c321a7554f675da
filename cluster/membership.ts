/**
 * Membership of the cluster (design: ../shared/design/cluster.md §3.1, §3.2 "Liveness"), on the
 * `nodes` table of migration 0001. A node registers, then heartbeats `lease_until = now() +
 * lease`; a node is live while its `lease_until > now()`. Both times are PostgreSQL's, never the
 * node's, so nodes with skewed clocks agree on who is live.
 *
 * A node also fences itself (`Heartbeat.serving`): when it cannot renew, it stops serving at
 * `last successful renewal + lease - margin`, before the database (and so the controller) deems
 * it dead. That deadline is a duration measured on the node's monotonic clock from the moment
 * the renewal was sent, which is no later than the database's now() of that renewal: the node
 * stops first, give or take clock rate drift, which the margin covers.
 */
import { withTransaction, type Pool } from '../outbound/postgres/pool.js';
import { checkLeaseMs } from './leases.js';

export type NodeRole = 'api' | 'search' | 'worker';

export interface NodeRegistration {
  id: string;
  /** host:port of its internal API. */
  address: string;
  roles: readonly NodeRole[];
  /** Placement prefers distinct zones. */
  zone?: string;
  /** Declared memory for shard replicas. */
  capacityBytes?: number;
}

export interface NodeInfo {
  id: string;
  address: string;
  roles: NodeRole[];
  zone: string | null;
  capacityBytes: number | null;
  startedAt: Date;
  leaseUntil: Date;
}

/**
 * Inserts the node, or updates it when it is registered already (a restart: new address, roles,
 * zone, capacity and started_at), with `lease_until = now() + leaseMs`.
 */
export async function registerNode(pool: Pool, node: NodeRegistration, leaseMs: number): Promise<void> {
  checkLeaseMs(leaseMs);
  if (!node.id) throw new RangeError('A node registers with a non-empty id.');
  await pool.query(
    `INSERT INTO nodes (id, address, roles, zone, capacity_bytes, lease_until)
       VALUES ($1, $2, $3, $4, $5, now() + $6::double precision * interval '1 millisecond')
     ON CONFLICT (id) DO UPDATE SET
       address = EXCLUDED.address, roles = EXCLUDED.roles, zone = EXCLUDED.zone,
       capacity_bytes = EXCLUDED.capacity_bytes, started_at = now(), lease_until = EXCLUDED.lease_until`,
    [node.id, node.address, [...node.roles], node.zone ?? null, node.capacityBytes ?? null, leaseMs],
  );
}

/**
 * Renews the node's lease to now() + leaseMs. False when the node has no row (it was removed):
 * it must register again.
 *
 * The renewal commits locally (synchronous_commit = local): with synchronous replication and its
 * standby lost, every commit waits for one to come back, and a node whose renewals waited would
 * stop serving reads too. A renewal a failover loses only makes the node look dead earlier on the
 * new primary, which the controller's grace covers; the data writes stay synchronous.
 */
export async function heartbeat(pool: Pool, nodeId: string, leaseMs: number): Promise<boolean> {
  checkLeaseMs(leaseMs);
  const rowCount = await withTransaction(pool, async (client) => {
    await client.query('SET LOCAL synchronous_commit = local');
    const res = await client.query(`UPDATE nodes SET lease_until = now() + $2::double precision * interval '1 millisecond' WHERE id = $1`, [nodeId, leaseMs]);
    return res.rowCount ?? 0;
  });
  return rowCount > 0;
}

/** The nodes whose lease has not passed on the database's clock, by id. */
export async function liveNodes(pool: Pool): Promise<NodeInfo[]> {
  const { rows } = await pool.query<{
    id: string;
    address: string;
    roles: NodeRole[];
    zone: string | null;
    capacity_bytes: string | null;
    started_at: Date;
    lease_until: Date;
  }>(`SELECT id, address, roles, zone, capacity_bytes, started_at, lease_until FROM nodes WHERE lease_until > now() ORDER BY id`);
  return rows.map((r) => ({
    id: r.id,
    address: r.address,
    roles: r.roles,
    zone: r.zone,
    capacityBytes: r.capacity_bytes === null ? null : Number(r.capacity_bytes),
    startedAt: r.started_at,
    leaseUntil: r.lease_until,
  }));
}

export interface HeartbeatOptions {
  /** Time between renewals (the design: 2 s). */
  intervalMs: number;
  /** The lease each renewal sets (the design: 10 s). */
  leaseMs: number;
  /** How long before the lease's end the node stops serving (default a tenth of the lease). */
  marginMs?: number;
  /** The monotonic clock of `serving` and of lastOk (default performance.now). */
  clock?: () => number;
}

/**
 * Renews a registered node's lease every `intervalMs` (one renewal at a time: the next is timed
 * from the end of the previous one, so a slow database never piles renewals up; each is bounded
 * by the pool's statement and connect timeouts) and tells whether the node may serve.
 */
export class Heartbeat {
  readonly intervalMs: number;
  readonly leaseMs: number;
  readonly marginMs: number;
  private readonly clock: () => number;
  private lastOkAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = false;
  /** False once a renewal found no row for the node (it must register again). */
  registered = true;

  constructor(
    private readonly pool: Pool,
    readonly nodeId: string,
    options: HeartbeatOptions,
  ) {
    checkLeaseMs(options.leaseMs);
    this.intervalMs = options.intervalMs;
    this.leaseMs = options.leaseMs;
    this.marginMs = options.marginMs ?? Math.floor(options.leaseMs / 10);
    this.clock = options.clock ?? (() => performance.now());
    if (!(this.intervalMs > 0 && this.marginMs >= 0 && this.intervalMs < this.leaseMs - this.marginMs)) {
      throw new RangeError(
        `A heartbeat renews more often than its lease less the margin lasts (interval ${this.intervalMs} ms, lease ${this.leaseMs} ms, margin ${this.marginMs} ms).`,
      );
    }
  }

  /** Renews once now (awaited: true when it succeeded), then every intervalMs until stop(). */
  async start(): Promise<boolean> {
    await this.renew();
    this.schedule();
    return this.lastOkAt !== undefined && this.registered;
  }

  /** The clock reading (of `clock`) when the last successful renewal was sent, if any. */
  get lastOk(): number | undefined {
    return this.lastOkAt;
  }

  /** Whether the node may serve at `now` (of `clock`): it renewed within lease - margin, and is not stopped. */
  serving(now: number = this.clock()): boolean {
    return !this.stopped && this.lastOkAt !== undefined && now < this.lastOkAt + this.leaseMs - this.marginMs;
  }

  /** Stops renewing (waits for a renewal in flight); serving() is false from now on. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.renew().then(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  private renew(): Promise<void> {
    const sentAt = this.clock();
    const run = heartbeat(this.pool, this.nodeId, this.leaseMs).then(
      (found) => {
        this.registered = found;
        if (found && !this.stopped) this.lastOkAt = sentAt;
      },
      () => {
        // The database could not be reached or refused: lastOk stays, and serving() turns false
        // at its deadline unless a later renewal succeeds.
      },
    );
    this.inFlight = run;
    return run;
  }
}
