/**
 * Where jobs wait and are taken: the interface every queue implementation offers. Today's is
 * LMDB (one machine); a PostgreSQL one for several machines is planned, so nothing here names
 * LMDB, and runners take work with leases (a deadline they renew), never in-process locks: a job
 * whose runner died is taken again once its lease lapses.
 */
import type { FileRecord, JobKind, JobRecord } from './records.js';

/** The idempotency key of a job creation, scoped to its organization and dataset. */
export interface IdempotencyKey {
  orgId: string;
  datasetId: string;
  key: string;
}

export interface JobPage {
  jobs: JobRecord[];
  total: number;
}

export interface JobQueue {
  /** Stores a new job and its files (and its idempotency key) together. */
  create(job: JobRecord, files: FileRecord[], idempotency?: IdempotencyKey): Promise<void>;
  /** The job an idempotency key created, if any. */
  byIdempotencyKey(key: IdempotencyKey): Promise<string | undefined>;
  get(jobId: string): Promise<JobRecord | undefined>;
  /** The job's files in their order within the job. */
  files(jobId: string): Promise<FileRecord[]>;
  file(jobId: string, fileId: string): Promise<FileRecord | undefined>;
  /** An organization's jobs, newest first, optionally of one dataset. */
  list(filter: { orgId: string; datasetId?: string }, limit: number, offset: number): Promise<JobPage>;
  /** Every job of a dataset (to delete its files with it). */
  ofDataset(datasetId: string): Promise<JobRecord[]>;
  /** Every job of a source, newest first. */
  ofSource(sourceId: string): Promise<JobRecord[]>;
  /** The jobs of a source still pending or running, newest first. */
  activeOfSource(sourceId: string): Promise<JobRecord[]>;
  /** Jobs still waiting for their upload to be completed, created before `before` (ISO 8601). */
  unconfirmed(before: string): Promise<JobRecord[]>;
  /** How many jobs there are of each kind and status (for metrics). */
  counts(): Promise<{ kind: JobKind; status: JobRecord['status']; count: number }[]>;

  /** Applies `change` to the stored job; resolves with the result. */
  update(jobId: string, change: (j: JobRecord) => JobRecord): Promise<JobRecord>;
  updateFile(jobId: string, fileId: string, change: (f: FileRecord) => FileRecord): Promise<FileRecord>;
  /** Changes a file and its job in one transaction (the job's counters follow its files). */
  updateFileAndJob(jobId: string, fileId: string, file: (f: FileRecord) => FileRecord, job: (j: JobRecord) => JobRecord): Promise<void>;
  /** Writes a job and some of its files in one transaction. */
  put(job: JobRecord, files: FileRecord[]): Promise<void>;
  /** Deletes jobs and their files. */
  remove(jobIds: string[]): Promise<void>;

  /**
   * Takes the oldest runnable job of these kinds for `owner` until `leaseMs` from now: a queued
   * job still pending, or a running one whose lease lapsed (or was given back). Marks it
   * running, counts the attempt. Resolves null when none is runnable.
   */
  claim(owner: string, kinds: readonly JobKind[], leaseMs: number): Promise<JobRecord | null>;
  /** Extends the lease; false when `owner` no longer holds the job (it lapsed and was taken). */
  renew(jobId: string, owner: string, leaseMs: number): Promise<boolean>;
  /** Gives the lease back at once (the runner stops): the job stays running and is taken next. */
  release(jobId: string, owner: string): Promise<void>;
  /** A name for a new runner's leases. */
  newOwner(): string;
  /** The runner of that name stopped: whatever it still holds may be taken at once. */
  retireOwner(owner: string): void;
}
