/**
 * Migration 0002: the job queue and the schedules of cluster mode (docs:
 * ../shared/design/cluster.md §3.6; code: cluster/job-queue.ts, cluster/schedule-ticks.ts).
 * A worker claims a queued job with FOR UPDATE SKIP LOCKED, which bumps its `fence`; every later
 * write of that attempt carries `AND fence = $f`, so a paused worker's late write changes nothing.
 * UNIQUE (schedule_id, scheduled_for) makes one job per schedule tick across nodes (rows with a
 * NULL schedule_id, manual and ad-hoc jobs, are outside it). Shipped SQL never changes once
 * released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
-- Jobs of the cluster. lease_owner/lease_until are on the database's clock; fence goes up by one
-- at each claim, and attempt counts claims.
CREATE TABLE cluster_jobs (
  id               text PRIMARY KEY,
  kind             text NOT NULL,
  payload          jsonb NOT NULL DEFAULT '{}',
  status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  priority         integer NOT NULL DEFAULT 0,    -- lower runs first
  run_at           timestamptz NOT NULL DEFAULT now(),
  created_at       timestamptz NOT NULL DEFAULT now(),
  attempt          integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  lease_owner      text,
  lease_until      timestamptz,
  fence            bigint NOT NULL DEFAULT 0,
  cancel_requested boolean NOT NULL DEFAULT false,
  schedule_id      text,
  scheduled_for    timestamptz,
  trigger          text NOT NULL DEFAULT 'api',     -- api, schedule, manual
  result           jsonb,
  error            text,
  UNIQUE (schedule_id, scheduled_for)
);
-- The claim: queued jobs in (priority, created_at) order.
CREATE INDEX cluster_jobs_claim ON cluster_jobs (priority, created_at) WHERE status = 'queued';
-- The reaper: running jobs by lease end.
CREATE INDEX cluster_jobs_running ON cluster_jobs (lease_until) WHERE status = 'running';

-- Cron schedules (cron with optional seconds, croner syntax) in an IANA time zone. next_run_at is
-- the next occurrence, computed by the node that fired the previous one.
CREATE TABLE cluster_schedules (
  id          text PRIMARY KEY,
  cron        text NOT NULL,
  time_zone   text NOT NULL DEFAULT 'UTC',
  enabled     boolean NOT NULL DEFAULT true,
  next_run_at timestamptz,                       -- NULL: the cron has no future occurrence
  kind        text NOT NULL,
  payload     jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX cluster_schedules_due ON cluster_schedules (next_run_at) WHERE enabled;
`;

const migration: Migration = { version: 2, name: 'cluster_jobs', sql };
export default migration;
