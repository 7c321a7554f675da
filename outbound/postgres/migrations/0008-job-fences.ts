/**
 * Migration 0008: fences and schedule ticks of the service's jobs in cluster mode
 * (cluster/pg-job-queue.ts; design: ../shared/design/cluster.md §3.6).
 * `fence` is the number of the job's latest attempt, set by each claim: every write of an
 * attempt (its progress, its files, its end) first checks it under the row's lock, so a worker
 * paused past its lease writes nothing once a newer attempt took the job.
 * `scheduled_for` is the schedule tick a job was made for (NULL for manual triggers, uploads,
 * retries): UNIQUE (schedule_id, scheduled_for) makes one job per tick, whichever nodes fire it
 * and however often. Existing rows take their fence from their record's attempts.
 * Shipped SQL never changes once released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
ALTER TABLE job_records
  ADD COLUMN fence         bigint NOT NULL DEFAULT 0,
  ADD COLUMN schedule_id   text,
  ADD COLUMN scheduled_for text;   -- ISO 8601, as the schedule's next_run_at has it
UPDATE job_records SET fence = coalesce((record->>'attempts')::bigint, 0), schedule_id = record->>'schedule_id';
CREATE UNIQUE INDEX job_records_tick ON job_records (schedule_id, scheduled_for) WHERE scheduled_for IS NOT NULL;
`;

const migration: Migration = { version: 8, name: 'job_fences', sql };
export default migration;
