/**
 * Named leases with fencing epochs (design: ../shared/design/cluster.md §3.2 "Placement", §3.6),
 * on the `leases` table of migration 0001. The controller is whoever holds `leases('controller')`.
 *
 * Every time is PostgreSQL's (`now()` of the statement's transaction), never the node's: a lease
 * is live while `lease_until > now()` on the database, whatever the nodes' clocks say.
 *
 * Epochs: a lease's `epoch` goes up by one each time a holder takes it over (it was free, expired,
 * or never taken), and stays when its live holder renews it. A holder therefore names its term
 * by (name, epoch), and `fenced` refuses a write made under a term that is over.
 */
import type { Pool, PoolClient } from '../outbound/postgres/pool.js';

/** A term of a lease: the epoch its holder writes under. */
export interface LeaseTerm {
  epoch: number;
}

/** Thrown by `fenced` when the caller's term of the lease is over: its write must not happen. */
export class LeaseLostError extends Error {
  constructor(
    readonly lease: string,
    readonly epoch: number,
  ) {
    super(
      `The lease '${lease}' is no longer held under epoch ${epoch} (it expired or another holder took it over): ` +
        'the write made under it was refused.',
    );
    this.name = 'LeaseLostError';
  }
}

/**
 * Takes the lease `name` for `holder` for `leaseMs`, in one statement (INSERT ... ON CONFLICT DO
 * UPDATE ... WHERE ... RETURNING), so of any number of contenders exactly one wins:
 * - no row yet: inserted at epoch 1;
 * - free (holder NULL) or expired: taken over, epoch + 1;
 * - live and ours: renewed, same epoch;
 * - live and another's: null (nothing changes).
 * A lease of ours that expired is a takeover too (new epoch): writes of the expired term, e.g. of
 * a paused earlier process of the same holder id, stay fenced off.
 *
 * Concurrency: the conflicting row is locked and the WHERE is evaluated on its newest committed
 * version, so a contender that waited on another's takeover sees a live lease of another holder
 * and gets null. A transaction holding the row `FOR SHARE` (see `fenced`) makes a takeover wait
 * for it to end.
 */
export async function acquireLease(pool: Pool | PoolClient, name: string, holder: string, leaseMs: number): Promise<LeaseTerm | null> {
  checkLeaseMs(leaseMs);
  const { rows } = await pool.query<{ epoch: string }>(
    `INSERT INTO leases AS l (name, holder, epoch, lease_until)
       VALUES ($1, $2, 1, now() + $3::double precision * interval '1 millisecond')
     ON CONFLICT (name) DO UPDATE SET
       holder = EXCLUDED.holder,
       epoch = CASE WHEN l.holder = EXCLUDED.holder AND l.lease_until > now() THEN l.epoch ELSE l.epoch + 1 END,
       lease_until = EXCLUDED.lease_until
     WHERE l.holder IS NULL OR l.holder = EXCLUDED.holder OR l.lease_until <= now()
     RETURNING epoch`,
    [name, holder, leaseMs],
  );
  return rows.length === 0 ? null : { epoch: Number(rows[0].epoch) };
}

/**
 * Extends the holder's live term to now() + leaseMs. False when the term is over: another holder
 * took the lease (the epoch moved), or it expired (re-acquire it, which starts a new epoch).
 */
export async function renewLease(pool: Pool | PoolClient, name: string, holder: string, epoch: number, leaseMs: number): Promise<boolean> {
  checkLeaseMs(leaseMs);
  const { rowCount } = await pool.query(
    `UPDATE leases SET lease_until = now() + $4::double precision * interval '1 millisecond'
     WHERE name = $1 AND holder = $2 AND epoch = $3 AND lease_until > now()`,
    [name, holder, epoch, leaseMs],
  );
  return (rowCount ?? 0) > 0;
}

/** Gives the lease up at once (the next contender takes it over with epoch + 1). False when the term was already over. */
export async function releaseLease(pool: Pool | PoolClient, name: string, holder: string, epoch: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE leases SET lease_until = '-infinity' WHERE name = $1 AND holder = $2 AND epoch = $3 AND lease_until > now()`,
    [name, holder, epoch],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * The fence of a write made under a lease: call it first in the write's transaction (on the same
 * client, see withTransaction). It throws LeaseLostError, so the transaction rolls back and
 * writes nothing, unless the lease is still at `epoch` and not expired (at this statement's
 * time, not the transaction's start).
 *
 * The design says "every controller write carries WHERE epoch = $mine". Put literally into each
 * write (`... AND EXISTS (SELECT 1 FROM leases WHERE name = .. AND epoch = $mine)`), that check
 * reads a snapshot and takes no lock: a takeover committing between the check and our COMMIT
 * would not stop the write. So the predicate is checked here once per transaction, on the lease
 * row locked FOR SHARE: a takeover (an UPDATE of that row) then waits until our transaction ends,
 * so every write of a term commits before the next term begins, or is refused. A single
 * statement may instead carry the same predicate itself (UPDATE ... WHERE epoch = $mine, as jobs
 * do with `fence`, §3.6) when the row it updates is the one that holds the epoch.
 *
 * The lock also holds off the holder's own renewal until the transaction ends: keep such
 * transactions short (the pool's statement and idle-in-transaction timeouts bound them).
 */
export async function fenced(client: PoolClient, name: string, epoch: number): Promise<void> {
  const { rows } = await client.query(
    `SELECT 1 FROM leases WHERE name = $1 AND epoch = $2 AND lease_until > statement_timestamp() FOR SHARE`,
    [name, epoch],
  );
  if (rows.length === 0) throw new LeaseLostError(name, epoch);
}

export function checkLeaseMs(leaseMs: number): void {
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new RangeError(`A lease lasts a positive, finite number of milliseconds (got ${leaseMs}).`);
  }
}
