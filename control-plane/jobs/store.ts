/**
 * Jobs in LMDB (control.mdb), so a restart finds them: the job records, their files keyed
 * [job id, file id], and idempotency keys [org, dataset, key] -> job id.
 */
import type { Database } from 'lmdb';
import type { ControlStore } from '../store.js';
import type { FileRecord, JobRecord } from './records.js';

export class JobStore {
  readonly jobs: Database<JobRecord, string>;
  readonly files: Database<FileRecord, string[]>;
  readonly idempotency: Database<string, string[]>;

  constructor(private readonly store: ControlStore) {
    this.jobs = store.root.openDB({ name: 'jobs' });
    this.files = store.root.openDB({ name: 'job_files' });
    this.idempotency = store.root.openDB({ name: 'job_idempotency' });
  }

  write<T>(fn: () => T): Promise<T> {
    return this.store.write(fn);
  }

  job(id: string): JobRecord | undefined {
    return this.jobs.get(id);
  }

  /** The job's files in their order within the job. */
  filesOf(jobId: string): FileRecord[] {
    return [...this.files.getRange({ start: [jobId], end: [jobId, '\uffff'] })].map((e) => e.value).sort((a, b) => a.position - b.position);
  }

  file(jobId: string, fileId: string): FileRecord | undefined {
    return this.files.get([jobId, fileId]);
  }

  /** Every job, newest first. */
  all(): JobRecord[] {
    return [...this.jobs.getRange()].map((e) => e.value).sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
  }

  putJob(job: JobRecord): Promise<void> {
    return this.write(() => void this.jobs.put(job.job_id, job));
  }

  putFile(file: FileRecord): Promise<void> {
    return this.write(() => void this.files.put([file.job_uuid, file.uuid], file));
  }

  /** Applies `change` to the stored job and returns the result. */
  async updateJob(id: string, change: (j: JobRecord) => void): Promise<JobRecord> {
    return this.write(() => {
      const j = this.jobs.get(id);
      if (!j) throw new Error(`job ${id} vanished`);
      const next = structuredClone(j);
      change(next);
      this.jobs.put(id, next);
      return next;
    });
  }

  /** Changes a file and its job in one transaction (the job's counters follow its files). */
  updateFileAndJob(jobId: string, fileId: string, file: (f: FileRecord) => FileRecord, job: (j: JobRecord) => JobRecord): Promise<void> {
    return this.write(() => {
      this.files.put([jobId, fileId], file(this.files.get([jobId, fileId])!));
      this.jobs.put(jobId, job(this.jobs.get(jobId)!));
    });
  }

  async updateFile(jobId: string, fileId: string, change: (f: FileRecord) => void): Promise<FileRecord> {
    return this.write(() => {
      const f = this.files.get([jobId, fileId]);
      if (!f) throw new Error(`file ${fileId} of job ${jobId} vanished`);
      const next = { ...f };
      change(next);
      this.files.put([jobId, fileId], next);
      return next;
    });
  }
}
