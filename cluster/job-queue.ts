/**
 * The design's job queue (../shared/design/cluster.md §3.6), on `cluster_jobs` of migration 0002:
 * the SQL of claims, fences and the reaper, tested alone (test/cluster/jobs.test.ts). The service
 * does not run on it: its jobs are the contract's records (jobs/queue.ts), kept by
 * cluster/pg-job-queue.ts with the same claims and fences on `job_records`. Any node enqueues; workers `claim` with FOR UPDATE SKIP LOCKED, so concurrent
 * claimers never take the same job and never wait on each other.
 *
 * Fencing: a claim bumps the job's `fence` (and `attempt`) and leases it to the worker until
 * `now() + leaseMs` on the database's clock. Every later write of that attempt (`heartbeat`,
 * `complete`, `fail`, `cancelled`) carries `AND fence = $f AND status = 'running'`: once the lease
 * was lost (reaped, re-claimed, cancelled by the reaper) such a write matches no row, changes
 * nothing, and returns false, so a paused worker's late write cannot overwrite a newer attempt.
 * A worker whose heartbeat returns `alive: false` must stop.
 *
 * `reap` (any node, periodically) ends expired leases: the job is queued again, or `failed` once
 * it used max_attempts, or `cancelled` when a cancel was requested. Cancel of a queued job is
 * immediate; of a running job it sets `cancel_requested`, which the worker sees in its heartbeat
 * and acknowledges with `cancelled`.
 */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from '../outbound/postgres/pool.js';
import { checkLeaseMs } from './leases.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface NewJob {
  /** Default: a random UUID. */
  id?: string;
  kind: string;
  payload?: unknown;
  /** Lower runs first (default 0). */
  priority?: number;
  /** Not claimed before this time (default: now). */
  runAt?: Date;
  /** Claims at most (default 3). */
  maxAttempts?: number;
  /** 'api' (default), 'schedule', 'manual'. */
  trigger?: string;
  scheduleId?: string;
  scheduledFor?: Date;
}

export interface ClaimedJob {
  id: string;
  /** Carry it in every write of this attempt. */
  fence: number;
  /** 1 for the first claim. */
  attempt: number;
  kind: string;
  payload: unknown;
}

export interface ReapResult {
  requeued: number;
  failed: number;
  cancelled: number;
}

type Queryable = Pool | PoolClient;

/** Inserts a queued job; returns its id. */
export async function enqueue(pool: Queryable, job: NewJob): Promise<string> {
  const id = job.id ?? randomUUID();
  await pool.query(
    `INSERT INTO cluster_jobs (id, kind, payload, priority, run_at, max_attempts, trigger, schedule_id, scheduled_for)
     VALUES ($1, $2, $3, $4, COALESCE($5, now()), $6, $7, $8, $9)`,
    [
      id,
      job.kind,
      JSON.stringify(job.payload ?? {}),
      job.priority ?? 0,
      job.runAt ?? null,
      job.maxAttempts ?? 3,
      job.trigger ?? 'api',
      job.scheduleId ?? null,
      job.scheduledFor ?? null,
    ],
  );
  return id;
}

/**
 * Claims the first queued, due job (by priority, then age) for `node` for `leaseMs`: the design's
 * single UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1). Null when none.
 */
export async function claim(pool: Queryable, node: string, leaseMs: number): Promise<ClaimedJob | null> {
  checkLeaseMs(leaseMs);
  const { rows } = await pool.query<{ id: string; fence: string; attempt: number; kind: string; payload: unknown }>(
    `UPDATE cluster_jobs
        SET status = 'running', lease_owner = $1, lease_until = now() + $2::double precision * interval '1 millisecond',
            fence = fence + 1, attempt = attempt + 1
      WHERE id = (SELECT id FROM cluster_jobs
                   WHERE status = 'queued' AND run_at <= now()
                   ORDER BY priority, created_at
                   FOR UPDATE SKIP LOCKED LIMIT 1)
      RETURNING id, fence, attempt, kind, payload`,
    [node, leaseMs],
  );
  if (rows.length === 0) return null;
  const r = rows[0];
  return { id: r.id, fence: Number(r.fence), attempt: r.attempt, kind: r.kind, payload: r.payload };
}

/**
 * Extends the attempt's lease to now() + leaseMs. `alive: false` (0 rows) means the lease was lost
 * (reaped, claimed again, or the job ended): the worker must abort. `cancelRequested` asks it to
 * stop and call `cancelled`.
 */
export async function heartbeat(pool: Queryable, id: string, fence: number, leaseMs: number): Promise<{ alive: boolean; cancelRequested: boolean }> {
  checkLeaseMs(leaseMs);
  const { rows } = await pool.query<{ cancel_requested: boolean }>(
    `UPDATE cluster_jobs SET lease_until = now() + $3::double precision * interval '1 millisecond'
      WHERE id = $1 AND fence = $2 AND status = 'running'
      RETURNING cancel_requested`,
    [id, fence, leaseMs],
  );
  return rows.length === 0 ? { alive: false, cancelRequested: false } : { alive: true, cancelRequested: rows[0].cancel_requested };
}

/** Ends the attempt `succeeded` with `result`. False (nothing changed) when the attempt's fence is stale. */
export async function complete(pool: Queryable, id: string, fence: number, result: unknown = null): Promise<boolean> {
  return finish(pool, id, fence, 'succeeded', JSON.stringify(result), null);
}

/** Ends the job `failed` with `error` (no retry). False (nothing changed) when the attempt's fence is stale. */
export async function fail(pool: Queryable, id: string, fence: number, error: string): Promise<boolean> {
  return finish(pool, id, fence, 'failed', null, error);
}

/** The worker's acknowledgement of a cancel it saw in a heartbeat: ends the job `cancelled`. False when the fence is stale. */
export async function cancelled(pool: Queryable, id: string, fence: number): Promise<boolean> {
  return finish(pool, id, fence, 'cancelled', null, null);
}

async function finish(pool: Queryable, id: string, fence: number, status: JobStatus, result: string | null, error: string | null): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE cluster_jobs SET status = $3, result = $4::jsonb, error = $5, lease_until = NULL
      WHERE id = $1 AND fence = $2 AND status = 'running'`,
    [id, fence, status, result, error],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Requests a cancel: a queued job becomes `cancelled` at once; a running one gets
 * `cancel_requested` (its worker sees it in its next heartbeat). Returns the job's status after
 * the call, or null when there is no such job or it had ended already.
 */
export async function requestCancel(pool: Queryable, id: string): Promise<JobStatus | null> {
  const { rows } = await pool.query<{ status: JobStatus }>(
    `UPDATE cluster_jobs
        SET cancel_requested = true,
            status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END
      WHERE id = $1 AND status IN ('queued', 'running')
      RETURNING status`,
    [id],
  );
  return rows[0]?.status ?? null;
}

/**
 * Ends the expired leases (running AND lease_until < now()): cancelled when a cancel was
 * requested, failed once attempt >= max_attempts, queued again otherwise (the next claim bumps
 * the fence, so the lost attempt's writes stay refused). Rows another reaper is handling are
 * skipped (SKIP LOCKED), so reapers on several nodes do not wait on each other.
 */
export async function reap(pool: Queryable): Promise<ReapResult> {
  const { rows } = await pool.query<{ status: JobStatus; n: number }>(
    `WITH expired AS (
       SELECT id FROM cluster_jobs WHERE status = 'running' AND lease_until < now() FOR UPDATE SKIP LOCKED
     ), ended AS (
       UPDATE cluster_jobs j
          SET status = CASE WHEN j.cancel_requested THEN 'cancelled'
                            WHEN j.attempt >= j.max_attempts THEN 'failed'
                            ELSE 'queued' END,
              error = CASE WHEN NOT j.cancel_requested AND j.attempt >= j.max_attempts
                           THEN 'the lease of attempt ' || j.attempt || ' of ' || j.max_attempts || ' expired (its worker stopped heartbeating)'
                           ELSE j.error END,
              lease_owner = NULL, lease_until = NULL
         FROM expired WHERE j.id = expired.id
       RETURNING j.status
     )
     SELECT status, count(*)::int AS n FROM ended GROUP BY status`,
  );
  const count = (s: JobStatus) => rows.find((r) => r.status === s)?.n ?? 0;
  return { requeued: count('queued'), failed: count('failed'), cancelled: count('cancelled') };
}
