/**
 * Runs load jobs one at a time, in the order they were confirmed. Every state change is written
 * to LMDB first, so a restart finds each job where it was: `resume()` puts a job that was running
 * back in the queue (its unfinished files start over: loads are upserts, so a file read twice
 * loads the same vectors) and every file ends completed, failed or skipped with a reason.
 */
import { ApiError } from '../errors.js';
import type { DatasetRecord } from '../domain/dataset-record.js';
import type { DatasetService } from '../domain/datasets.js';
import type { ObjectStore } from '../uploads/object-store.js';
import { IdSet } from './id-set.js';
import { FileLoadError, Interrupted, type FileLoader } from './file-loader.js';
import { failedFile, newFile, newJob, type FileRecord, type JobRecord } from './records.js';
import type { JobStore } from './store.js';

/** Progress is written at most this often while a file loads. */
const PROGRESS_EVERY_MS = 500;

export class JobRunner {
  private readonly queue: string[] = [];
  private pumping: Promise<void> | null = null;
  private stopping = false;

  constructor(
    private readonly jobs: JobStore,
    private readonly objects: ObjectStore,
    private readonly datasets: DatasetService,
    private readonly loader: FileLoader,
  ) {}

  /** On start: jobs that were running when the process stopped go back in the queue. */
  async resume(): Promise<void> {
    const waiting = this.jobs.all().filter((j) => j.confirmed && (j.status === 'running' || j.status === 'pending')).reverse();
    for (const job of waiting) {
      if (job.status === 'running') {
        await this.jobs.write(() => {
          for (const f of this.jobs.filesOf(job.job_id)) {
            if (f.status !== 'processing') continue;
            this.jobs.files.put([job.job_id, f.uuid], { ...f, status: 'pending', retry_count: f.retry_count + 1, status_reason: 'restarted after the service stopped' });
          }
          this.jobs.jobs.put(job.job_id, { ...job, status: 'pending', current_step: 'queued', message: 'resumed after the service restarted' });
        });
      }
      this.enqueue(job.job_id);
    }
  }

  enqueue(jobId: string): void {
    this.queue.push(jobId);
    this.pumping ??= this.pump().finally(() => (this.pumping = null));
  }

  /** A fresh full rerun of a failed or cancelled job (or one whose every file failed). */
  async retry(job: JobRecord): Promise<JobRecord> {
    const files = this.jobs.filesOf(job.job_id);
    const everyFileFailed = files.length > 0 && files.every((f) => f.status === 'failed');
    if (job.status === 'completed' && !everyFileFailed) throw new ApiError('job_not_retryable', `job ${job.job_id} completed; only failed or cancelled jobs can be retried`);
    if (job.status === 'pending' || job.status === 'running') throw new ApiError('job_not_retryable', `job ${job.job_id} is still ${job.status}`);
    const fresh = newJob({ orgId: job.org_id, datasetId: job.dataset_id, validateOnly: job.validate_only, idempotencyKey: null, retryOf: job.job_id });
    fresh.confirmed = true;
    fresh.files_confirmed = files.length;
    fresh.current_step = 'queued';
    const copies: FileRecord[] = [];
    for (const f of files) {
      let copy = newFile({ jobId: fresh.job_id, fileId: crypto.randomUUID(), position: f.position, name: f.file_name, key: f.file_path, size: f.file_size_bytes, contentType: f.content_type });
      const size = await this.objects.size(f.file_path);
      if (size === f.file_size_bytes) copy.uploaded_at = f.uploaded_at ?? new Date().toISOString();
      else copy = failedFile(copy, 'upload_missing', 'the uploaded bytes are no longer stored');
      copies.push(copy);
    }
    fresh.message = `retry of job ${job.job_id}`;
    await this.jobs.write(() => {
      this.jobs.jobs.put(fresh.job_id, fresh);
      for (const c of copies) this.jobs.files.put([fresh.job_id, c.uuid], c);
    });
    this.enqueue(fresh.job_id);
    return fresh;
  }

  /** Stops after the current row group; the running job stays `running` and resumes on the next start. */
  async close(): Promise<void> {
    this.stopping = true;
    await this.pumping;
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0 && !this.stopping) {
      const id = this.queue.shift()!;
      try {
        await this.run(id);
      } catch (e) {
        if (e instanceof Interrupted) return;
        console.error(`sable: job ${id} broke:`, e);
        await this.jobs.updateJob(id, (j) => finish(j, 'failed', { type: 'internal', message: (e as Error).message })).catch(() => {});
      }
    }
  }

  private async run(jobId: string): Promise<void> {
    const job = this.jobs.job(jobId);
    if (!job || job.status !== 'pending' || !job.confirmed) return;
    const t0 = Date.now();
    const startedAt = new Date().toISOString();
    await this.jobs.updateJob(jobId, (j) => Object.assign(j, { status: 'running', started_at: startedAt, current_step: 'preparing' }));

    let record: DatasetRecord;
    try {
      record = await this.datasets.ensure(job.org_id, job.dataset_id);
    } catch (e) {
      const message = e instanceof ApiError ? e.message : `the dataset cannot be opened: ${(e as Error).message}`;
      await this.failRemaining(jobId, 'dataset_unavailable', message);
      await this.jobs.updateJob(jobId, (j) => finish(j, 'failed', { type: e instanceof ApiError ? e.code : 'dataset_unavailable', message }, t0));
      return;
    }

    // The dataset's index builds wait for the load (they would take the CPU it needs).
    const releaseBuilds = job.validate_only ? () => {} : this.datasets.engineOf(record).holdBuilds();
    try {
      await this.loadFiles(job, record, t0);
    } finally {
      releaseBuilds();
    }
  }

  private async loadFiles(job: JobRecord, record: DatasetRecord, t0: number): Promise<void> {
    const jobId = job.job_id;
    const all = this.jobs.filesOf(jobId);
    const pendingFiles = all.filter((f) => f.status === 'pending');
    const multiFile = all.filter((f) => f.status !== 'skipped').length > 1;
    const totalBytes = pendingFiles.reduce((s, f) => s + f.file_size_bytes, 0) || 1;
    let doneBytes = 0;
    const seen = new IdSet();
    let lastWrite = 0;
    let progressWrite: Promise<unknown> | null = null;

    for (const [index, file] of pendingFiles.entries()) {
      if (this.stopping) throw new Interrupted();
      const fileT0 = Date.now();
      await this.jobs.updateFile(jobId, file.uuid, (f) => Object.assign(f, { status: 'processing', started_at: new Date().toISOString(), status_reason: null }));
      const step = `${job.validate_only ? 'validating' : 'loading'} ${file.file_name} (${index + 1} of ${pendingFiles.length})`;
      await this.jobs.updateJob(jobId, (j) => void (j.current_step = step));
      let staged;
      try {
        staged = await this.objects.stage(file.file_path);
        const result = await this.loader.load({
          path: staged.path,
          upsert: (ids, vectors, metadata, observed) => this.datasets.loadBatch(record, ids, vectors, metadata, observed),
          dim: record.dim,
          validateOnly: job.validate_only,
          idColumnRequired: multiFile,
          seen,
          shouldStop: () => this.stopping,
          onProgress: async (rowsDone, rowsTotal, inserted) => {
            if (Date.now() - lastWrite < PROGRESS_EVERY_MS || progressWrite) return;
            lastWrite = Date.now();
            const pct = (100 * (doneBytes + file.file_size_bytes * (rowsDone / Math.max(rowsTotal, 1)))) / totalBytes;
            // Not awaited: the load goes on while the commit syncs; one write in flight at most.
            progressWrite = this.jobs
              .updateFileAndJob(
                jobId,
                file.uuid,
                (f) => ({ ...f, rows_read: rowsDone, vectors_inserted: inserted }),
                (j) => ({ ...j, progress_percentage: round1(Math.min(pct, 99.9)), processing_time_seconds: (Date.now() - t0) / 1000 }),
              )
              .catch((e: Error) => console.error(`sable: job ${jobId}: progress not recorded: ${e.message}`))
              .finally(() => (progressWrite = null));
          },
        });
        await progressWrite;
        await this.jobs.updateFileAndJob(
          jobId,
          file.uuid,
          (f) => ({
            ...f,
            status: 'completed',
            status_reason: job.validate_only ? `valid: ${result.rows} rows, dimension ${record.dim}` : `${result.inserted} vectors loaded`,
            rows_read: result.rows,
            vectors_inserted: result.inserted,
            processing_duration_ms: Date.now() - fileT0,
            completed_at: new Date().toISOString(),
          }),
          (j) => ({ ...j, documents_processed: j.documents_processed + 1, vectors_inserted: j.vectors_inserted + result.inserted }),
        );
      } catch (e) {
        await progressWrite;
        if (e instanceof Interrupted) throw e;
        // An API error here is the dataset's (deleted or closed during the load); anything else is ours.
        const err = e instanceof FileLoadError ? e : e instanceof ApiError ? new FileLoadError(e.code, e.message) : new FileLoadError('internal', (e as Error).message);
        if (!(e instanceof FileLoadError) && !(e instanceof ApiError)) console.error(`sable: job ${jobId} file ${file.file_name}:`, e);
        await this.jobs.updateFileAndJob(
          jobId,
          file.uuid,
          (f) => ({ ...failedFile(f, err.type, err.message), vectors_inserted: err.inserted, processing_duration_ms: Date.now() - fileT0 }),
          (j) => ({ ...j, vectors_inserted: j.vectors_inserted + err.inserted }),
        );
      } finally {
        await staged?.release();
      }
      doneBytes += file.file_size_bytes;
    }

    const files = this.jobs.filesOf(jobId);
    const failed = files.filter((f) => f.status === 'failed');
    const completed = files.filter((f) => f.status === 'completed');
    await this.jobs.updateJob(jobId, (j) => {
      const errors = failed.length > 0
        ? {
            type: failed.length === 1 ? failed[0].error_type! : 'files_failed',
            message: failed.length === 1 ? `${failed[0].file_name}: ${failed[0].error_message}` : `${failed.length} of ${files.length} files failed`,
            files: failed.map((f) => ({ file_id: f.uuid, file_name: f.file_name, error_type: f.error_type ?? 'unknown', error_message: f.error_message ?? '' })),
          }
        : null;
      if (completed.length === 0) {
        finish(j, 'failed', errors ?? { type: 'no_files', message: 'no file was confirmed for this job' }, t0);
      } else {
        finish(j, 'completed', errors, t0);
        j.message = `${j.validate_only ? 'validated' : 'loaded'} ${completed.length} file(s), ${j.vectors_inserted} vectors` + (failed.length > 0 ? `; ${failed.length} file(s) failed` : '');
      }
    });
  }

  /** Marks every file still pending as failed (the job could not start). */
  private async failRemaining(jobId: string, type: string, message: string): Promise<void> {
    await this.jobs.write(() => {
      for (const f of this.jobs.filesOf(jobId)) {
        if (f.status !== 'pending' && f.status !== 'processing') continue;
        this.jobs.files.put([jobId, f.uuid], failedFile(f, type, message));
      }
    });
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function finish(j: JobRecord, status: 'completed' | 'failed', error: JobRecord['error_details'], t0?: number): void {
  j.status = status;
  j.error_details = error;
  j.completed_at = new Date().toISOString();
  j.current_step = null;
  if (t0 !== undefined) j.processing_time_seconds = (Date.now() - t0) / 1000;
  if (status === 'completed') j.progress_percentage = 100;
  if (status === 'failed') j.message = error?.message ?? 'failed';
}
