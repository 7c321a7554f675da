/**
 * Migration 0005: the answer runs of cluster mode (cluster/run-log.ts; design:
 * ../shared/design/cluster.md §3.7). The node that received a question owns its run: it records
 * the run here with a lease on the database's clock, and its chunks in order, so any node streams
 * them (`Last-Event-ID` resumes anywhere). A run whose owner stopped renewing is ended `failed`
 * by another node; the unique index on `done` chunks makes exactly one `done` per run whoever
 * writes it. Shipped SQL never changes once released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
CREATE TABLE runs (
  org_id      text NOT NULL,
  run_id      text NOT NULL,
  query       text NOT NULL,
  owner       text NOT NULL,
  lease_until timestamptz NOT NULL,
  status      text NOT NULL DEFAULT 'running',
  result      jsonb,
  failure     jsonb,
  started_at  timestamptz NOT NULL DEFAULT now(),
  ended_at    timestamptz,
  PRIMARY KEY (org_id, run_id)
);
CREATE INDEX runs_running ON runs (lease_until) WHERE status = 'running';
CREATE INDEX runs_ended ON runs (ended_at) WHERE status <> 'running';

CREATE TABLE run_events (
  org_id text NOT NULL,
  run_id text NOT NULL,
  seq    integer NOT NULL CHECK (seq >= 1),
  chunk  jsonb NOT NULL,
  PRIMARY KEY (org_id, run_id, seq),
  FOREIGN KEY (org_id, run_id) REFERENCES runs (org_id, run_id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX run_events_one_done ON run_events (org_id, run_id) WHERE chunk->>'chunk_type' = 'done';
`;

const migration: Migration = { version: 5, name: 'run_log', sql };
export default migration;
