/**
 * The service's job queue in cluster mode: jobs/queue.ts over PostgreSQL (migration 0004), so a
 * job queued through any node is listed by every node and taken by whichever worker claims it
 * first. Claims take the oldest runnable job with FOR UPDATE SKIP LOCKED (workers never wait on
 * each other's claims); leases are on the database's clock. A lease lapses at its deadline, or
 * at once when its owner is known gone: owners are named `{node}/{pid}/{nonce}`, and a node that
 * starts again releases what its previous process held (it cannot renew them), as the LMDB queue
 * does for a restarted process.
 *
 * Fencing (migration 0008): a claim sets the job's `fence` to the attempt's number. A write made
 * inside an attempt (jobs/attempts.ts: the runner runs each attempt in its context) to that
 * attempt's job locks the job's row and checks the fence first: another number means a newer
 * attempt took the job after this one's lease lapsed, and the write throws LeaseLost, changing
 * nothing (progress, files, the end state alike). A job made while a schedule tick fires is that
 * tick's (`scheduled_for`); UNIQUE (schedule_id, scheduled_for) refuses a second one (TickTaken).
 */
import { randomBytes } from 'node:crypto';
import { attemptOf, LeaseLost, TickTaken, tickOf } from '../jobs/attempts.js';
import type { IdempotencyKey, JobPage, JobQueue } from '../jobs/queue.js';
import type { FileRecord, JobKind, JobRecord } from '../jobs/records.js';
import { withTransaction, type Pool, type PoolClient } from '../outbound/postgres/pool.js';

type Queryable = Pool | PoolClient;

export class PgJobQueue implements JobQueue {
  private readonly owners = new Set<string>();

  constructor(
    private readonly pool: Pool,
    private readonly nodeId: string,
  ) {}

  /** Frees the leases this node's earlier processes held: they died with them. */
  async start(): Promise<void> {
    await this.pool.query(
      `UPDATE job_records SET lease_owner = NULL, lease_until = NULL
        WHERE lease_owner LIKE $1 || '/%' AND split_part(lease_owner, '/', 2) <> $2`,
      [this.nodeId, String(process.pid)],
    );
  }

  async create(job: JobRecord, files: FileRecord[], idempotency?: IdempotencyKey): Promise<void> {
    const tick = tickOf(job.schedule_id);
    try {
      await withTransaction(this.pool, async (c) => {
        await this.putJob(c, job);
        if (tick) await c.query('UPDATE job_records SET scheduled_for = $2 WHERE job_id = $1', [job.job_id, tick.tick]);
        await this.putFiles(c, job.job_id, files);
        if (idempotency) {
          await c.query('INSERT INTO job_idempotency_keys (org_id, dataset_id, key, job_id) VALUES ($1, $2, $3, $4)', [idempotency.orgId, idempotency.datasetId, idempotency.key, job.job_id]);
        }
      });
    } catch (e) {
      const pg = e as { code?: string; constraint?: string };
      if (tick && pg.code === '23505' && pg.constraint === 'job_records_tick') throw new TickTaken(tick.scheduleId, tick.tick);
      throw e;
    }
  }

  async byIdempotencyKey(k: IdempotencyKey): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ job_id: string }>('SELECT job_id FROM job_idempotency_keys WHERE org_id = $1 AND dataset_id = $2 AND key = $3', [k.orgId, k.datasetId, k.key]);
    return rows[0]?.job_id;
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    const { rows } = await this.pool.query<{ record: JobRecord }>('SELECT record FROM job_records WHERE job_id = $1', [jobId]);
    return rows[0]?.record;
  }

  async files(jobId: string): Promise<FileRecord[]> {
    const { rows } = await this.pool.query<{ record: FileRecord }>('SELECT record FROM job_file_records WHERE job_id = $1 ORDER BY position', [jobId]);
    return rows.map((r) => r.record);
  }

  async file(jobId: string, fileId: string): Promise<FileRecord | undefined> {
    const { rows } = await this.pool.query<{ record: FileRecord }>('SELECT record FROM job_file_records WHERE job_id = $1 AND file_id = $2', [jobId, fileId]);
    return rows[0]?.record;
  }

  async list(filter: { orgId: string; datasetId?: string }, limit: number, offset: number): Promise<JobPage> {
    const where = filter.datasetId === undefined ? 'org_id = $1' : 'org_id = $1 AND dataset_id = $2';
    const args: unknown[] = filter.datasetId === undefined ? [filter.orgId] : [filter.orgId, filter.datasetId];
    const total = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_records WHERE ${where}`, args);
    const { rows } = await this.pool.query<{ record: JobRecord }>(
      `SELECT record FROM job_records WHERE ${where} ORDER BY created_at DESC, job_id LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
      [...args, limit, offset],
    );
    return { jobs: rows.map((r) => r.record), total: total.rows[0]!.n };
  }

  async ofDataset(datasetId: string): Promise<JobRecord[]> {
    return this.records('dataset_id = $1', [datasetId]);
  }

  async ofSource(sourceId: string): Promise<JobRecord[]> {
    return this.records('source_id = $1', [sourceId]);
  }

  async activeOfSource(sourceId: string): Promise<JobRecord[]> {
    return this.records(`source_id = $1 AND status IN ('pending', 'running')`, [sourceId]);
  }

  async unconfirmed(before: string): Promise<JobRecord[]> {
    return this.records(`status = 'pending' AND queued_at IS NULL AND created_at < $1`, [before]);
  }

  async counts(): Promise<{ kind: JobKind; status: JobRecord['status']; count: number }[]> {
    const { rows } = await this.pool.query<{ kind: JobKind; status: JobRecord['status']; count: number }>('SELECT kind, status, count(*)::int AS count FROM job_records GROUP BY kind, status');
    return rows;
  }

  update(jobId: string, change: (j: JobRecord) => JobRecord): Promise<JobRecord> {
    return withTransaction(this.pool, async (c) => {
      const next = change(await this.lockedJob(c, jobId));
      await this.putJob(c, next);
      return next;
    });
  }

  updateFile(jobId: string, fileId: string, change: (f: FileRecord) => FileRecord): Promise<FileRecord> {
    return withTransaction(this.pool, async (c) => {
      await this.fenced(c, jobId);
      const { rows } = await c.query<{ record: FileRecord }>('SELECT record FROM job_file_records WHERE job_id = $1 AND file_id = $2 FOR UPDATE', [jobId, fileId]);
      if (!rows[0]) throw new Error(`file ${fileId} of job ${jobId} vanished`);
      const next = change(rows[0].record);
      await this.putFiles(c, jobId, [next]);
      return next;
    });
  }

  async updateFileAndJob(jobId: string, fileId: string, file: (f: FileRecord) => FileRecord, job: (j: JobRecord) => JobRecord): Promise<void> {
    await withTransaction(this.pool, async (c) => {
      // The job first: every path that changes a job's files locks the job before them.
      const j = await this.lockedJob(c, jobId);
      const { rows } = await c.query<{ record: FileRecord }>('SELECT record FROM job_file_records WHERE job_id = $1 AND file_id = $2 FOR UPDATE', [jobId, fileId]);
      if (!rows[0]) throw new Error(`file ${fileId} of job ${jobId} vanished`);
      await this.putFiles(c, jobId, [file(rows[0].record)]);
      await this.putJob(c, job(j));
    });
  }

  async put(job: JobRecord, files: FileRecord[]): Promise<void> {
    await withTransaction(this.pool, async (c) => {
      await this.fenced(c, job.job_id);
      await this.putJob(c, job);
      await this.putFiles(c, job.job_id, files);
    });
  }

  async remove(jobIds: string[]): Promise<void> {
    if (jobIds.length > 0) await this.pool.query('DELETE FROM job_records WHERE job_id = ANY($1::text[])', [jobIds]);
  }

  async claim(owner: string, kinds: readonly JobKind[], leaseMs: number): Promise<JobRecord | null> {
    return withTransaction(this.pool, async (c) => {
      const { rows } = await c.query<{ record: JobRecord; fence: string }>(
        `SELECT record, fence FROM job_records
          WHERE confirmed AND kind = ANY($1::text[]) AND status IN ('pending', 'running')
            AND (status = 'pending' OR lease_owner IS NULL OR lease_until IS NULL OR lease_until <= now())
          ORDER BY coalesce(queued_at, created_at), job_id
          LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [[...kinds]],
      );
      const job = rows[0]?.record;
      if (!job) return null;
      // The fence column is the attempt's number (the record's count, should they ever differ, never goes back).
      const attempt = Math.max(job.attempts, Number(rows[0]!.fence)) + 1;
      const taken: JobRecord = { ...job, status: 'running', lease_owner: owner, lease_expires_at: Date.now() + leaseMs, attempts: attempt };
      await this.putJob(c, taken, leaseMs);
      await c.query('UPDATE job_records SET fence = $2 WHERE job_id = $1', [job.job_id, attempt]);
      return taken;
    });
  }

  async renew(jobId: string, owner: string, leaseMs: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE job_records SET lease_until = now() + $3::double precision * interval '1 millisecond',
              record = jsonb_set(record, '{lease_expires_at}', to_jsonb($4::double precision))
        WHERE job_id = $1 AND lease_owner = $2 AND status = 'running' AND ($5::bigint IS NULL OR fence = $5)`,
      [jobId, owner, leaseMs, Date.now() + leaseMs, attemptOf(jobId)?.fence ?? null],
    );
    return (rowCount ?? 0) > 0;
  }

  async release(jobId: string, owner: string): Promise<void> {
    await this.pool.query(
      `UPDATE job_records SET lease_owner = NULL, lease_until = NULL,
              record = record || '{"lease_owner": null, "lease_expires_at": 0}'::jsonb
        WHERE job_id = $1 AND lease_owner = $2 AND ($3::bigint IS NULL OR fence = $3)`,
      [jobId, owner, attemptOf(jobId)?.fence ?? null],
    );
  }

  newOwner(): string {
    const owner = `${this.nodeId}/${process.pid}/${randomBytes(5).toString('hex')}`;
    this.owners.add(owner);
    return owner;
  }

  retireOwner(owner: string): void {
    this.owners.delete(owner);
    // What the closed runner held may be taken at once, by this node or another.
    void this.pool
      .query(`UPDATE job_records SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1`, [owner])
      .catch(() => {});
  }

  private async records(where: string, args: unknown[]): Promise<JobRecord[]> {
    const { rows } = await this.pool.query<{ record: JobRecord }>(`SELECT record FROM job_records WHERE ${where} ORDER BY created_at DESC, job_id`, args);
    return rows.map((r) => r.record);
  }

  /** The job's record, its row locked; inside an attempt at it, checked against the attempt's fence. */
  private async lockedJob(c: PoolClient, jobId: string): Promise<JobRecord> {
    const { rows } = await c.query<{ record: JobRecord; fence: string }>('SELECT record, fence FROM job_records WHERE job_id = $1 FOR UPDATE', [jobId]);
    checkFence(jobId, rows[0]?.fence);
    if (!rows[0]) throw new Error(`job ${jobId} vanished`);
    return rows[0].record;
  }

  /** Inside an attempt at `jobId`: locks the job's row and throws LeaseLost unless the attempt is still its latest. */
  private async fenced(c: PoolClient, jobId: string): Promise<void> {
    if (!attemptOf(jobId)) return;
    const { rows } = await c.query<{ fence: string }>('SELECT fence FROM job_records WHERE job_id = $1 FOR UPDATE', [jobId]);
    checkFence(jobId, rows[0]?.fence);
  }

  /** Writes the record and the columns queries use; `leaseMs` (a claim) sets the lease on the database's clock. */
  private async putJob(c: Queryable, j: JobRecord, leaseMs?: number): Promise<void> {
    await c.query(
      `INSERT INTO job_records (job_id, org_id, dataset_id, source_id, kind, status, confirmed, created_at, queued_at, lease_owner, lease_until, record, schedule_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
               CASE WHEN $10::text IS NULL THEN NULL
                    WHEN $11::double precision IS NOT NULL THEN now() + $11::double precision * interval '1 millisecond'
                    ELSE NULL END, $12, $13)
       ON CONFLICT (job_id) DO UPDATE SET
         org_id = EXCLUDED.org_id, dataset_id = EXCLUDED.dataset_id, source_id = EXCLUDED.source_id, kind = EXCLUDED.kind,
         schedule_id = EXCLUDED.schedule_id,
         status = EXCLUDED.status, confirmed = EXCLUDED.confirmed, created_at = EXCLUDED.created_at, queued_at = EXCLUDED.queued_at,
         lease_owner = EXCLUDED.lease_owner,
         -- A change that keeps the owner keeps the lease's deadline; a claim sets it; no owner, none.
         lease_until = CASE WHEN EXCLUDED.lease_owner IS NULL THEN NULL
                            WHEN $11::double precision IS NOT NULL THEN EXCLUDED.lease_until
                            WHEN job_records.lease_owner IS NOT DISTINCT FROM EXCLUDED.lease_owner THEN job_records.lease_until
                            ELSE now() END,
         record = EXCLUDED.record`,
      [j.job_id, j.org_id, j.dataset_id, j.source_id ?? null, j.kind, j.status, j.confirmed, j.created_at, j.queued_at ?? null, j.lease_owner ?? null, leaseMs ?? null, JSON.stringify(j), j.schedule_id ?? null],
    );
  }

  private async putFiles(c: Queryable, jobId: string, files: FileRecord[]): Promise<void> {
    if (files.length === 0) return;
    await c.query(
      `INSERT INTO job_file_records (job_id, file_id, position, record)
       SELECT $1, f->>'uuid', (f->>'position')::int, f FROM jsonb_array_elements($2::jsonb) AS f
       ON CONFLICT (job_id, file_id) DO UPDATE SET position = EXCLUDED.position, record = EXCLUDED.record`,
      [jobId, JSON.stringify(files)],
    );
  }
}

/** Throws LeaseLost when the code running is an attempt at `jobId` and `fence` (the row's, absent: no row) is not its number. */
function checkFence(jobId: string, fence: string | undefined): void {
  const a = attemptOf(jobId);
  if (!a) return;
  if (fence === undefined) throw new LeaseLost(jobId, a.fence, null);
  if (Number(fence) !== a.fence) throw new LeaseLost(jobId, a.fence, Number(fence));
}
