/**
 * Jobs and job files as the contract shows them ("Job", "Job file"), plus what the service keeps
 * to run them: the organization, the dataset, the kind, the runner's lease, where each file's
 * bytes are, and whether they arrived. Internal fields never leave through publicJob / publicFile.
 */
import { randomUUID } from 'node:crypto';
import type { JobErrorType } from '../errors/job-errors.js';

export const JOB_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const FILE_STATUSES = ['pending', 'processing', 'completed', 'failed', 'skipped'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];
/** What a job does: each kind has one handler, living with its use-case (parquet: bulk/parquet-load.ts; ingest: ingest/pipeline/ingest-job.ts). */
export const JOB_KINDS = ['parquet', 'ingest'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export interface JobError {
  type: JobErrorType;
  message: string;
  /** Per-file errors, when files failed. */
  files?: { file_id: string; file_name: string; error_type: JobErrorType; error_message: string }[];
}

export interface JobRecord {
  job_id: string;
  org_id: string;
  dataset_id: string;
  kind: JobKind;
  /** The source an ingest job reads, and the schedule that started it. */
  source_id: string | null;
  schedule_id: string | null;
  /** The job's files are known: given by uploads, or listed from the source (then a full
   * listing, whose absent items are documents gone from the source). */
  discovered: boolean;
  full_listing: boolean;
  /** Documents removed because their source no longer holds them, and those the deletion
   * guard withheld. */
  documents_deleted: number;
  deletions_withheld: number;
  status: JobStatus;
  message: string;
  documents_processed: number;
  vectors_inserted: number;
  processing_time_seconds: number;
  created_at: string;
  started_at: string;
  completed_at: string | null;
  progress_percentage: number;
  current_step: string | null;
  error_details: JobError | null;
  /** Check files (schema, dimension, ids) without loading them. */
  validate_only: boolean;
  idempotency_key: string | null;
  /** The job this one reruns. */
  retry_of: string | null;
  /** Set by upload/complete (or at once for multipart uploads): the runner may take the job. */
  confirmed: boolean;
  /** How many files upload/complete accepted (what a repeated call answers). */
  files_confirmed: number;
  /** When the job became runnable (runners take jobs in this order). */
  queued_at: string | null;
  /** The runner that holds the job while it runs, and until when (ms since epoch). */
  lease_owner: string | null;
  lease_expires_at: number;
  /** How many times a runner took the job (a job that keeps killing its runner ends failed). */
  attempts: number;
}

export interface FileRecord {
  uuid: string;
  job_uuid: string;
  file_name: string;
  /** Where the file is in its source (a name, a path, a key); for Parquet loads, its storage key. */
  file_path: string;
  /** Where its bytes are stored (uploads), when that is not file_path. */
  storage_key?: string;
  /** The item of the source it is (listing sources): its stable id, URL and change signal. */
  item?: { id: string; url: string | null; version: string | null };
  /** The catalog document it became. */
  document_id?: string;
  file_size_bytes: number;
  content_type: string;
  status: FileStatus;
  status_reason: string | null;
  error_type: JobErrorType | null;
  error_message: string | null;
  chunks_created: number;
  embeddings_generated: number;
  vectors_inserted: number;
  processing_duration_ms: number;
  retry_count: number;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
  /** Order within the job (as given at init or in the multipart body). */
  position: number;
  /** Rows read (validated) so far. */
  rows_read: number;
  /** When the bytes arrived (presigned PUT or multipart), null before. */
  uploaded_at: string | null;
}

/** The job is not over: it waits to be taken, or a runner holds it (or held it and died). */
export function isActive(job: Pick<JobRecord, 'status'>): boolean {
  return job.status === 'pending' || job.status === 'running';
}

/** The file has not reached an end state: a job that ends now ends it too. */
export function isOpen(file: Pick<FileRecord, 'status'>): boolean {
  return file.status === 'pending' || file.status === 'processing';
}

/** The file is taken: it is processing from now on. */
export function startedFile(f: FileRecord): FileRecord {
  return { ...f, status: 'processing', started_at: new Date().toISOString(), status_reason: null };
}

/** The file was processing when its job stopped: it waits to start over, counted as a retry. */
export function restartedFile(f: FileRecord): FileRecord {
  return { ...f, status: 'pending', retry_count: f.retry_count + 1, status_reason: 'restarted after the service stopped' };
}

/** The file ended in failure: its reason is the error's type. */
export function failedFile(f: FileRecord, type: JobErrorType, message: string): FileRecord {
  return { ...f, status: 'failed', status_reason: type, error_type: type, error_message: message, completed_at: new Date().toISOString() };
}

/** The job in an end state; its lease is dropped. */
export function finish(j: JobRecord, status: 'completed' | 'failed', error: JobRecord['error_details'], t0?: number): JobRecord {
  const next: JobRecord = {
    ...j,
    status,
    error_details: error,
    completed_at: new Date().toISOString(),
    current_step: null,
    lease_owner: null,
    lease_expires_at: 0,
  };
  if (t0 !== undefined) next.processing_time_seconds = (Date.now() - t0) / 1000;
  if (status === 'completed') next.progress_percentage = 100;
  if (status === 'failed') next.message = error?.message ?? 'failed';
  return next;
}

/**
 * How a job's files ended, and the job's error they make: the failed file's own when one
 * failed, `files_failed` with each failed file when several did, null when none did. Each
 * kind's handler words its own ending from these.
 */
export function concludeFromFiles(files: FileRecord[]): { completed: FileRecord[]; failed: FileRecord[]; skipped: FileRecord[]; error: JobError | null } {
  const failed = files.filter((f) => f.status === 'failed');
  const error: JobError | null = failed.length > 0
    ? {
        type: failed.length === 1 ? failed[0].error_type! : 'files_failed',
        message: failed.length === 1 ? `${failed[0].file_name}: ${failed[0].error_message}` : `${failed.length} of ${files.length} files failed`,
        files: failed.map((f) => ({ file_id: f.uuid, file_name: f.file_name, error_type: f.error_type ?? 'internal', error_message: f.error_message ?? '' })),
      }
    : null;
  return { completed: files.filter((f) => f.status === 'completed'), failed, skipped: files.filter((f) => f.status === 'skipped'), error };
}

export function publicJob(j: JobRecord) {
  return {
    job_id: j.job_id,
    status: j.status,
    message: j.message,
    documents_processed: j.documents_processed,
    vectors_inserted: j.vectors_inserted,
    processing_time_seconds: j.processing_time_seconds,
    started_at: j.started_at,
    completed_at: j.completed_at,
    progress_percentage: j.progress_percentage,
    current_step: j.current_step,
    error_details: j.error_details,
    dataset_id: j.dataset_id,
    source_id: j.source_id,
    created_at: j.created_at,
    validate_only: j.validate_only,
    retry_of: j.retry_of,
  };
}

export function publicFile(f: FileRecord) {
  return {
    uuid: f.uuid,
    file_name: f.file_name,
    file_path: f.file_path,
    file_size_bytes: f.file_size_bytes,
    content_type: f.content_type,
    status: f.status,
    status_reason: f.status_reason,
    error_type: f.error_type,
    error_message: f.error_message,
    chunks_created: f.chunks_created,
    embeddings_generated: f.embeddings_generated,
    vectors_inserted: f.vectors_inserted,
    processing_duration_ms: f.processing_duration_ms,
    retry_count: f.retry_count,
    started_at: f.started_at,
    completed_at: f.completed_at,
    created_at: f.created_at,
    job_uuid: f.job_uuid,
  };
}

/**
 * The contract's statistics object, or null before any file reached an end state; ingest jobs
 * add the documents they removed from the dataset and those the deletion guard withheld.
 */
export function statisticsOf(job: JobRecord, files: FileRecord[]) {
  const ended = files.filter((f) => f.status === 'completed' || f.status === 'failed' || f.status === 'skipped');
  if (ended.length === 0) return null;
  const processed = files.filter((f) => f.status === 'completed');
  const errorBreakdown: Record<string, number> = {};
  const typeBreakdown: Record<string, number> = {};
  for (const f of files) {
    if (f.status === 'failed' && f.error_type) errorBreakdown[f.error_type] = (errorBreakdown[f.error_type] ?? 0) + 1;
    typeBreakdown[f.content_type] = (typeBreakdown[f.content_type] ?? 0) + 1;
  }
  const total = ended.reduce((s, f) => s + f.processing_duration_ms, 0);
  const timed = ended.filter((f) => f.status !== 'skipped');
  return {
    total_files_discovered: files.length,
    files_processed: processed.length,
    files_skipped: files.filter((f) => f.status === 'skipped').length,
    files_failed: files.filter((f) => f.status === 'failed').length,
    total_bytes_processed: processed.reduce((s, f) => s + f.file_size_bytes, 0),
    total_chunks_created: files.reduce((s, f) => s + f.chunks_created, 0),
    total_embeddings_generated: files.reduce((s, f) => s + f.embeddings_generated, 0),
    total_vectors_inserted: files.reduce((s, f) => s + f.vectors_inserted, 0),
    avg_processing_time_ms: timed.length > 0 ? Math.round(total / timed.length) : 0,
    total_processing_time_ms: Math.round(total),
    error_breakdown: errorBreakdown,
    file_type_breakdown: typeBreakdown,
    ...(job.kind === 'ingest' ? { documents_deleted: job.documents_deleted, deletions_withheld: job.deletions_withheld } : {}),
  };
}

export function newJob(o: {
  kind: JobKind;
  orgId: string;
  datasetId: string;
  validateOnly: boolean;
  idempotencyKey: string | null;
  retryOf?: string;
  sourceId?: string;
  scheduleId?: string;
}): JobRecord {
  const now = new Date().toISOString();
  return {
    job_id: randomUUID(),
    org_id: o.orgId,
    dataset_id: o.datasetId,
    kind: o.kind,
    source_id: o.sourceId ?? null,
    schedule_id: o.scheduleId ?? null,
    discovered: false,
    full_listing: false,
    documents_deleted: 0,
    deletions_withheld: 0,
    status: 'pending',
    message: '',
    documents_processed: 0,
    vectors_inserted: 0,
    processing_time_seconds: 0,
    created_at: now,
    started_at: now,
    completed_at: null,
    progress_percentage: 0,
    current_step: null,
    error_details: null,
    validate_only: o.validateOnly,
    idempotency_key: o.idempotencyKey,
    retry_of: o.retryOf ?? null,
    confirmed: false,
    files_confirmed: 0,
    queued_at: null,
    lease_owner: null,
    lease_expires_at: 0,
    attempts: 0,
  };
}

let lastQueuedMs = 0;

/**
 * The job made runnable: a runner may take it from now on. Runners take jobs in `queued_at`
 * order, so two jobs queued within one millisecond get distinct stamps, in the order they came.
 */
export function queued(j: JobRecord, filesConfirmed: number, message: string): JobRecord {
  lastQueuedMs = Math.max(Date.now(), lastQueuedMs + 1);
  return { ...j, confirmed: true, files_confirmed: filesConfirmed, current_step: 'queued', message, queued_at: new Date(lastQueuedMs).toISOString() };
}

export function newFile(o: { jobId: string; fileId: string; position: number; name: string; key: string; path?: string; size: number; contentType: string }): FileRecord {
  return {
    uuid: o.fileId,
    job_uuid: o.jobId,
    file_name: o.name,
    file_path: o.path ?? o.key,
    ...(o.path !== undefined ? { storage_key: o.key } : {}),
    file_size_bytes: o.size,
    content_type: o.contentType,
    status: 'pending',
    status_reason: null,
    error_type: null,
    error_message: null,
    chunks_created: 0,
    embeddings_generated: 0,
    vectors_inserted: 0,
    processing_duration_ms: 0,
    retry_count: 0,
    started_at: null,
    completed_at: null,
    created_at: new Date().toISOString(),
    position: o.position,
    rows_read: 0,
    uploaded_at: null,
  };
}
