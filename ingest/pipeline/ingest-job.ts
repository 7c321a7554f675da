/**
 * The `ingest` job kind: one path for every source type. The connector lists the source's items
 * (unless an upload gave the files, discovery.ts), then each file is fetched, hashed, parsed and
 * chunked on a parse thread, embedded with the dataset's model and upserted as one vector per
 * chunk, and its document recorded in the catalog (process-file.ts). Files run two at a time, so
 * one file's parsing overlaps the other's embedding. Each file has a time bound and ends
 * completed, skipped or failed with a typed reason; the job goes on past a bad file.
 *
 * Incremental sync: a document whose bytes (or the source's change signal) did not change is
 * skipped; a changed one replaces its chunks; after a full listing, documents the source no
 * longer holds lose their chunks, under the deletion guard (gone-documents.ts).
 */
import type { DatasetRecord } from '../../catalog/datasets/record.js';
import { SableError } from '../../errors/codes.js';
import { FileError } from '../../errors/job-errors.js';
import { failedFile, finish, isOpen, newFile, restartedFile, type FileRecord, type JobRecord } from '../../jobs/records.js';
import { Interrupted, type JobContext, type JobHandler } from '../../jobs/runner.js';
import type { ConnectorContext } from '../connectors/connector.js';
import { conclude } from './conclusion.js';
import { discover } from './discovery.js';
import { failLeftDocuments } from './document-failure.js';
import { removeGone } from './gone-documents.js';
import { processFile } from './process-file.js';
import { DEFAULT_INGEST, type IngestDeps, type IngestOptions, type Run } from './run.js';

export class IngestJobHandler implements JobHandler {
  readonly kind = 'ingest' as const;
  private readonly opts: IngestOptions;

  constructor(
    private readonly d: IngestDeps,
    opts: Partial<IngestOptions> = {},
  ) {
    this.opts = { ...DEFAULT_INGEST, ...opts };
  }

  async run(job: JobRecord, ctx: JobContext): Promise<void> {
    const t0 = Date.now();
    const q = this.d.queue;
    if (ctx.resumed) await this.resume(job);
    await q.update(job.job_id, (j) => ({ ...j, started_at: j.attempts > 1 ? j.started_at : new Date().toISOString(), current_step: 'preparing' }));

    const source = job.source_id ? this.d.sources.get(job.source_id) : undefined;
    if (!source || source.org_id !== job.org_id) return this.failJob(job, 'source_not_found', `source ${job.source_id} no longer exists`, t0);
    const connector = this.d.connectors[source.type];
    let record: DatasetRecord;
    try {
      record = await this.d.datasets.ensure(job.org_id, job.dataset_id);
    } catch (e) {
      return this.failJob(job, e instanceof SableError ? e.code : 'dataset_unavailable', (e as Error).message, t0);
    }
    const schedule = job.schedule_id ? this.d.schedules.get(job.schedule_id) : undefined;
    const config = this.d.sources.reveal(source);
    const cctx: ConnectorContext = { orgId: job.org_id, sourceId: source.id, config, state: structuredClone(schedule?.resume_state ?? {}), signal: ctx.signal };
    const run: Run = { deps: this.d, opts: this.opts, job, source, connector, record, cctx, ctx, incremental: config.sync_mode === 'incremental', t0 };

    try {
      if (!job.discovered) await discover(run);
      await this.processAll(run);
      if (ctx.stopping()) throw new Interrupted();
      const current = (await q.get(job.job_id))!;
      if (current.full_listing) await removeGone(run);
    } catch (e) {
      await connector.finished?.(cctx);
      if (e instanceof Interrupted) throw e;
      if (e instanceof SableError || e instanceof FileError) {
        const type = e instanceof SableError ? e.code : e.type;
        return this.failJob(job, type, e.message, t0);
      }
      throw e;
    }
    await connector.finished?.(cctx);
    // What the connector kept for the next run, and when this one finished listing and indexing.
    const resumeState = { ...cctx.state, last_job_id: job.job_id, last_synced_at: new Date().toISOString() };
    if (schedule) await this.d.schedules.update(schedule.id, (s) => ({ ...s, resume_state: resumeState, active_job_id: s.active_job_id === job.job_id ? null : s.active_job_id }));
    await conclude(q, job.job_id, t0);
  }

  /** Ingest jobs rerun from the source: a retry is a fresh job over the same source, files listed anew. */
  async filesForRetry(job: JobRecord, fresh: JobRecord): Promise<FileRecord[]> {
    Object.assign(fresh, { source_id: job.source_id, schedule_id: null, discovered: false });
    // An upload job's files are its only ones: a retry reprocesses them.
    if (job.full_listing || !job.discovered) return [];
    fresh.discovered = true;
    return (await this.d.queue.files(job.job_id))
      .filter((f) => f.uploaded_at !== null)
      .map((f, position) => ({
        ...newFile({ jobId: fresh.job_id, fileId: crypto.randomUUID(), position, name: f.file_name, key: f.storage_key ?? f.file_path, path: f.file_path, size: f.file_size_bytes, contentType: f.content_type }),
        uploaded_at: f.uploaded_at,
      }));
  }

  /** The runner ended the job (time bound, attempts): documents it left processing end failed. */
  async abandoned(job: JobRecord): Promise<void> {
    await failLeftDocuments(this.d, job, job.error_details?.type ?? 'internal', job.error_details?.message ?? 'the job ended');
  }

  /** Files that were being processed when the job stopped start over. */
  private async resume(job: JobRecord): Promise<void> {
    const processing = (await this.d.queue.files(job.job_id)).filter((f) => f.status === 'processing');
    await this.d.queue.put({ ...job, message: 'resumed after the service restarted' }, processing.map(restartedFile));
  }

  /** The pending files, `concurrency` at a time; the job's progress follows each one done. */
  private async processAll(run: Run): Promise<void> {
    const pending = (await this.d.queue.files(run.job.job_id)).filter((f) => f.status === 'pending');
    const total = pending.length;
    let next = 0;
    let done = 0;
    const worker = async () => {
      while (next < pending.length) {
        if (run.ctx.stopping()) return;
        const file = pending[next++];
        await processFile(run, file, `${next} of ${total}`);
        done++;
        const pct = total === 0 ? 99.9 : Math.min(99.9, Math.round((1000 * done) / total) / 10);
        await this.d.queue.update(run.job.job_id, (j) => ({ ...j, progress_percentage: pct, processing_time_seconds: (Date.now() - run.t0) / 1000 }));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.opts.concurrency) }, worker));
  }

  private async failJob(job: JobRecord, type: string, message: string, t0: number): Promise<void> {
    const files = await this.d.queue.files(job.job_id);
    const current = (await this.d.queue.get(job.job_id))!;
    await this.d.queue.put(
      finish(current, 'failed', { type: type as never, message }, t0),
      files.filter(isOpen).map((f) => failedFile(f, type as never, message)),
    );
    await failLeftDocuments(this.d, job, type, message);
  }
}
