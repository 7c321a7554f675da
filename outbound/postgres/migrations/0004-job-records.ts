/**
 * Migration 0004: the service's job queue in cluster mode (cluster/pg-job-queue.ts implements
 * jobs/queue.ts over these tables). Each job's record and each file's are kept whole (jsonb, the
 * shapes jobs/records.ts defines); the columns beside them are what queries filter and order on,
 * and the lease, held on the database's clock so nodes with skewed clocks agree on when it
 * lapses. Files and idempotency keys go with their job.
 * Shipped SQL never changes once released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
CREATE TABLE job_records (
  job_id      text PRIMARY KEY,
  org_id      text NOT NULL,
  dataset_id  text,
  source_id   text,
  kind        text NOT NULL,
  status      text NOT NULL,
  confirmed   boolean NOT NULL,
  created_at  text NOT NULL,          -- ISO 8601, as the record has it (lists are newest first)
  queued_at   text,                   -- claims take the oldest queued first
  lease_owner text,
  lease_until timestamptz,
  record      jsonb NOT NULL
);
CREATE INDEX job_records_org ON job_records (org_id, created_at DESC);
CREATE INDEX job_records_dataset ON job_records (dataset_id);
CREATE INDEX job_records_source ON job_records (source_id);
CREATE INDEX job_records_active ON job_records (kind, (coalesce(queued_at, created_at))) WHERE status IN ('pending', 'running');

CREATE TABLE job_file_records (
  job_id   text NOT NULL REFERENCES job_records (job_id) ON DELETE CASCADE,
  file_id  text NOT NULL,
  position integer NOT NULL,
  record   jsonb NOT NULL,
  PRIMARY KEY (job_id, file_id)
);

CREATE TABLE job_idempotency_keys (
  org_id     text NOT NULL,
  dataset_id text NOT NULL,
  key        text NOT NULL,
  job_id     text NOT NULL REFERENCES job_records (job_id) ON DELETE CASCADE,
  PRIMARY KEY (org_id, dataset_id, key)
);
`;

const migration: Migration = { version: 4, name: 'job_records', sql };
export default migration;
