/**
 * The `parquet` job kind: loads the uploaded Parquet files of a job into its dataset, one file at
 * a time (each a row group at a time, parquet-file-loader.ts). Every file ends completed, failed
 * with a typed reason, or skipped; the job completes when at least one file loaded. A job taken
 * again after a stop loads its unfinished files again (loads are upserts: the same vectors).
 */
import type { DatasetRecord } from '../catalog/datasets/record.js';
import type { DatasetService } from '../catalog/datasets/service.js';
import { SableError } from '../errors/codes.js';
import { FileError } from '../errors/job-errors.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { JobQueue } from '../jobs/queue.js';
import { concludeFromFiles, failedFile, finish, isOpen, newFile, restartedFile, startedFile, type FileRecord, type JobRecord } from '../jobs/records.js';
import { Interrupted, type JobContext, type JobHandler } from '../jobs/runner.js';
import { storageKeyOf } from '../jobs/uploads.js';
import { IdSet } from './id-set.js';
import type { ParquetLoader } from './parquet-file-loader.js';
import type { BulkLoad } from '../engine/index.js';

/** Progress is written at most this often while a file loads. */
const PROGRESS_EVERY_MS = 500;

export class ParquetLoadHandler implements JobHandler {
  readonly kind = 'parquet' as const;

  constructor(
    private readonly queue: JobQueue,
    private readonly objects: ObjectStore,
    private readonly datasets: DatasetService,
    private readonly loader: ParquetLoader,
  ) {}

  async run(job: JobRecord, ctx: JobContext): Promise<void> {
    const jobId = job.job_id;
    if (ctx.resumed) await this.resume(job);
    const t0 = Date.now();
    await this.queue.update(jobId, (j) => ({ ...j, started_at: new Date().toISOString(), current_step: 'preparing' }));

    let record: DatasetRecord;
    try {
      record = await this.datasets.ensure(job.org_id, job.dataset_id);
    } catch (e) {
      const known = e instanceof SableError;
      const message = known ? e.message : `the dataset cannot be opened: ${(e as Error).message}`;
      await this.failRemaining(jobId, 'dataset_unavailable', message);
      await this.queue.update(jobId, (j) => finish(j, 'failed', { type: known ? e.code : 'dataset_unavailable', message }, t0));
      return;
    }
    // The dataset's index builds wait for the load (they would take the CPU it needs).
    const bulk = job.validate_only ? null : this.datasets.beginBulkLoad(record);
    try {
      await this.loadFiles(job, record, t0, ctx, bulk);
    } finally {
      bulk?.end();
    }
  }

  /** The same stored files, for a fresh job; files whose bytes are gone fail at once. */
  async filesForRetry(job: JobRecord, fresh: JobRecord): Promise<FileRecord[]> {
    const copies: FileRecord[] = [];
    for (const f of await this.queue.files(job.job_id)) {
      let copy = newFile({ jobId: fresh.job_id, fileId: crypto.randomUUID(), position: f.position, name: f.file_name, key: storageKeyOf(f), size: f.file_size_bytes, contentType: f.content_type });
      const size = await this.objects.size(storageKeyOf(f));
      if (size === f.file_size_bytes) copy.uploaded_at = f.uploaded_at ?? new Date().toISOString();
      else copy = failedFile(copy, 'upload_missing', 'the uploaded bytes are no longer stored');
      copies.push(copy);
    }
    return copies;
  }

  /** A file that was loading when the job stopped starts over. */
  private async resume(job: JobRecord): Promise<void> {
    const processing = (await this.queue.files(job.job_id)).filter((f) => f.status === 'processing');
    await this.queue.put({ ...job, message: 'resumed after the service restarted' }, processing.map(restartedFile));
  }

  private async loadFiles(job: JobRecord, record: DatasetRecord, t0: number, ctx: JobContext, bulk: BulkLoad | null): Promise<void> {
    const jobId = job.job_id;
    const all = await this.queue.files(jobId);
    const pendingFiles = all.filter((f) => f.status === 'pending');
    const multiFile = all.filter((f) => f.status !== 'skipped').length > 1;
    const totalBytes = pendingFiles.reduce((s, f) => s + f.file_size_bytes, 0) || 1;
    let doneBytes = 0;
    const seen = new IdSet();
    let lastWrite = 0;
    let progressWrite: Promise<unknown> | null = null;

    for (const [index, file] of pendingFiles.entries()) {
      if (ctx.stopping()) throw new Interrupted();
      const fileT0 = Date.now();
      const step = `${job.validate_only ? 'validating' : 'loading'} ${file.file_name} (${index + 1} of ${pendingFiles.length})`;
      await this.queue.updateFileAndJob(jobId, file.uuid, startedFile, (j) => ({ ...j, current_step: step }));
      let staged;
      try {
        staged = await this.objects.stage(storageKeyOf(file));
        const result = await this.loader.load({
          path: staged.path,
          upsert: (ids, vectors, metadata, observed) => this.datasets.loadBatch(record, ids, vectors, metadata, observed),
          expectRows: (rows) => bulk?.expectRows(rows),
          dim: record.dim,
          validateOnly: job.validate_only,
          idColumnRequired: multiFile,
          seen,
          shouldStop: () => ctx.stopping(),
          onProgress: async (rowsDone, rowsTotal, inserted) => {
            if (Date.now() - lastWrite < PROGRESS_EVERY_MS || progressWrite) return;
            lastWrite = Date.now();
            const pct = (100 * (doneBytes + file.file_size_bytes * (rowsDone / Math.max(rowsTotal, 1)))) / totalBytes;
            // Not awaited: the load goes on while the commit syncs; one write in flight at most.
            progressWrite = this.queue
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
        await this.queue.updateFileAndJob(
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
        // A SableError here is the dataset's (deleted or closed during the load); anything else is ours.
        const err = e instanceof FileError ? e : e instanceof SableError ? new FileError(e.code, e.message) : new FileError('internal', (e as Error).message);
        if (!(e instanceof FileError) && !(e instanceof SableError)) console.error(`sable: job ${jobId} file ${file.file_name}:`, e);
        await this.queue.updateFileAndJob(
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

    const { completed, failed, error } = concludeFromFiles(await this.queue.files(jobId));
    await this.queue.update(jobId, (j) => {
      if (completed.length === 0) return finish(j, 'failed', error ?? { type: 'no_files', message: 'no file was confirmed for this job' }, t0);
      const done = finish(j, 'completed', error, t0);
      done.message = `${j.validate_only ? 'validated' : 'loaded'} ${completed.length} file(s), ${j.vectors_inserted} vectors` + (failed.length > 0 ? `; ${failed.length} file(s) failed` : '');
      return done;
    });
  }

  /** Marks every file still pending as failed (the job could not start). */
  private async failRemaining(jobId: string, type: 'dataset_unavailable', message: string): Promise<void> {
    const files = await this.queue.files(jobId);
    const job = await this.queue.get(jobId);
    await this.queue.put(job!, files.filter(isOpen).map((f) => failedFile(f, type, message)));
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
