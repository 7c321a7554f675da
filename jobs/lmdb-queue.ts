/**
 * The job queue in LMDB (the control store's environment), for one machine: job records, their
 * files keyed [job id, file id], and idempotency keys [org, dataset, key] -> job id. Claims and
 * renewals are write transactions, so two processes on one data directory never both hold a job.
 *
 * A lease lapses at its deadline, or at once when its owner is known dead: owners are named
 * host/pid/nonce, and a pid of this host that no longer runs (or this process under another
 * nonce: a runner that was closed) cannot renew, so a restart after a crash resumes at once.
 */
import { hostname } from 'node:os';
import type { Database } from 'lmdb';
import type { ControlStore } from '../catalog/store.js';
import type { IdempotencyKey, JobPage, JobQueue } from './queue.js';
import { isActive, type FileRecord, type JobKind, type JobRecord } from './records.js';

export class LmdbJobQueue implements JobQueue {
  private readonly jobs: Database<JobRecord, string>;
  private readonly fileDb: Database<FileRecord, string[]>;
  private readonly idempotency: Database<string, string[]>;

  constructor(private readonly store: ControlStore) {
    this.jobs = store.open('jobs');
    this.fileDb = store.open('jobFiles');
    this.idempotency = store.open('jobIdempotency');
  }

  async create(job: JobRecord, files: FileRecord[], idempotency?: IdempotencyKey): Promise<void> {
    await this.store.writeLocal(() => {
      this.jobs.put(job.job_id, job);
      for (const f of files) this.fileDb.put([job.job_id, f.uuid], f);
      if (idempotency) this.idempotency.put([idempotency.orgId, idempotency.datasetId, idempotency.key], job.job_id);
    });
  }

  async byIdempotencyKey(k: IdempotencyKey): Promise<string | undefined> {
    return this.idempotency.get([k.orgId, k.datasetId, k.key]);
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    const j = this.jobs.get(jobId);
    return j && withDefaults(j);
  }

  async files(jobId: string): Promise<FileRecord[]> {
    return this.filesNow(jobId);
  }

  async file(jobId: string, fileId: string): Promise<FileRecord | undefined> {
    return this.fileDb.get([jobId, fileId]);
  }

  async list(filter: { orgId: string; datasetId?: string }, limit: number, offset: number): Promise<JobPage> {
    const all = this.all().filter((j) => j.org_id === filter.orgId && (filter.datasetId === undefined || j.dataset_id === filter.datasetId));
    return { jobs: all.slice(offset, offset + limit), total: all.length };
  }

  async ofDataset(datasetId: string): Promise<JobRecord[]> {
    return this.all().filter((j) => j.dataset_id === datasetId);
  }

  async ofSource(sourceId: string): Promise<JobRecord[]> {
    return this.all().filter((j) => j.source_id === sourceId);
  }

  async activeOfSource(sourceId: string): Promise<JobRecord[]> {
    return this.all().filter((j) => j.source_id === sourceId && isActive(j));
  }

  async unconfirmed(before: string): Promise<JobRecord[]> {
    return this.all().filter((j) => j.status === 'pending' && j.queued_at === null && j.created_at < before);
  }

  async counts(): Promise<{ kind: JobKind; status: JobRecord['status']; count: number }[]> {
    const by = new Map<string, { kind: JobKind; status: JobRecord['status']; count: number }>();
    for (const { value } of this.jobs.getRange()) {
      const j = withDefaults(value);
      const key = `${j.kind}/${j.status}`;
      const c = by.get(key) ?? by.set(key, { kind: j.kind, status: j.status, count: 0 }).get(key)!;
      c.count++;
    }
    return [...by.values()];
  }

  update(jobId: string, change: (j: JobRecord) => JobRecord): Promise<JobRecord> {
    return this.store.writeLocal(() => {
      const next = change(this.current(jobId));
      this.jobs.put(jobId, next);
      return next;
    });
  }

  updateFile(jobId: string, fileId: string, change: (f: FileRecord) => FileRecord): Promise<FileRecord> {
    return this.store.writeLocal(() => {
      const f = this.fileDb.get([jobId, fileId]);
      if (!f) throw new Error(`file ${fileId} of job ${jobId} vanished`);
      const next = change(f);
      this.fileDb.put([jobId, fileId], next);
      return next;
    });
  }

  async updateFileAndJob(jobId: string, fileId: string, file: (f: FileRecord) => FileRecord, job: (j: JobRecord) => JobRecord): Promise<void> {
    await this.store.writeLocal(() => {
      this.fileDb.put([jobId, fileId], file(this.fileDb.get([jobId, fileId])!));
      this.jobs.put(jobId, job(this.current(jobId)));
    });
  }

  async put(job: JobRecord, files: FileRecord[]): Promise<void> {
    await this.store.writeLocal(() => {
      this.jobs.put(job.job_id, job);
      for (const f of files) this.fileDb.put([job.job_id, f.uuid], f);
    });
  }

  async remove(jobIds: string[]): Promise<void> {
    await this.store.writeLocal(() => {
      for (const id of jobIds) {
        this.jobs.remove(id);
        for (const key of this.fileDb.getKeys({ start: [id], end: [id, '\uffff'] })) this.fileDb.remove(key);
      }
      for (const { key, value } of this.idempotency.getRange()) if (jobIds.includes(value)) this.idempotency.remove(key);
    });
  }

  async claim(owner: string, kinds: readonly JobKind[], leaseMs: number): Promise<JobRecord | null> {
    // A read first: an idle runner polls, and a write transaction would sync the file each time.
    if (!this.firstRunnable(kinds)) return null;
    return this.store.writeLocal(() => {
      const job = this.firstRunnable(kinds);
      if (!job) return null;
      const taken: JobRecord = { ...job, status: 'running', lease_owner: owner, lease_expires_at: Date.now() + leaseMs, attempts: job.attempts + 1 };
      this.jobs.put(job.job_id, taken);
      return taken;
    });
  }

  /** The oldest queued job still pending, or running with a lapsed lease. */
  private firstRunnable(kinds: readonly JobKind[]): JobRecord | undefined {
    const now = Date.now();
    return this.all()
      .filter((j) => j.confirmed && kinds.includes(j.kind) && isActive(j) && (j.status === 'pending' || lapsed(j, now)))
      .sort((a, b) => (a.queued_at ?? a.created_at).localeCompare(b.queued_at ?? b.created_at))[0];
  }

  renew(jobId: string, owner: string, leaseMs: number): Promise<boolean> {
    return this.store.writeLocal(() => {
      const j = this.jobs.get(jobId);
      if (!j || j.lease_owner !== owner || j.status !== 'running') return false;
      this.jobs.put(jobId, { ...j, lease_expires_at: Date.now() + leaseMs });
      return true;
    });
  }

  async release(jobId: string, owner: string): Promise<void> {
    await this.store.writeLocal(() => {
      const j = this.jobs.get(jobId);
      if (j && j.lease_owner === owner) this.jobs.put(jobId, { ...j, lease_owner: null, lease_expires_at: 0 });
    });
  }

  newOwner(): string {
    const owner = `${HOST}/${process.pid}/${Math.random().toString(36).slice(2, 10)}`;
    liveOwners.add(owner);
    return owner;
  }

  retireOwner(owner: string): void {
    liveOwners.delete(owner);
  }

  private current(jobId: string): JobRecord {
    const j = this.jobs.get(jobId);
    if (!j) throw new Error(`job ${jobId} vanished`);
    return withDefaults(j);
  }

  private filesNow(jobId: string): FileRecord[] {
    return [...this.fileDb.getRange({ start: [jobId], end: [jobId, '\uffff'] })].map((e) => e.value).sort((a, b) => a.position - b.position);
  }

  /** Every job, newest first. */
  private all(): JobRecord[] {
    return [...this.jobs.getRange()]
      .map((e) => withDefaults(e.value))
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
  }
}

/** Records written before leases existed lack their fields. */
function withDefaults(j: JobRecord): JobRecord {
  return {
    ...j,
    queued_at: j.queued_at ?? (j.confirmed ? j.created_at : null),
    lease_owner: j.lease_owner ?? null,
    lease_expires_at: j.lease_expires_at ?? 0,
    attempts: j.attempts ?? 0,
    source_id: j.source_id ?? null,
    schedule_id: j.schedule_id ?? null,
    discovered: j.discovered ?? j.kind === 'parquet',
    full_listing: j.full_listing ?? false,
    documents_deleted: j.documents_deleted ?? 0,
    deletions_withheld: j.deletions_withheld ?? 0,
  };
}

const HOST = hostname();

/** Whether a running job's lease can be taken: past its deadline, or its owner cannot renew. */
function lapsed(j: JobRecord, now: number): boolean {
  if (j.lease_owner === null || j.lease_expires_at <= now) return true;
  const [host, pid] = j.lease_owner.split('/');
  if (host !== HOST) return false;
  if (Number(pid) === process.pid) return !liveOwners.has(j.lease_owner);
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Runners of this process that are open (their leases are live until they close). */
const liveOwners = new Set<string>();
