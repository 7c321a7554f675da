/**
 * The `ingest` job kind: one path for every source type. The connector lists the source's items
 * (unless an upload gave the files), then each file is fetched, hashed, parsed and chunked on a
 * parse thread, embedded with the dataset's model and upserted as one vector per chunk, and its
 * document recorded in the catalog. Files run two at a time, so one file's parsing overlaps the
 * other's embedding. Each file has a time bound and ends completed, skipped or failed with a
 * typed reason; the job goes on past a bad file.
 *
 * Incremental sync: a document whose bytes (or the source's change signal) did not change is
 * skipped; a changed one replaces its chunks; after a full listing, documents the source no
 * longer holds lose their chunks, unless that would remove more than 10 documents and more than
 * 20% of what the source brought in (a flaky listing): then the deletions are withheld and the
 * job says so.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { DatasetRecord } from '../../catalog/datasets/record.js';
import type { DatasetService } from '../../catalog/datasets/service.js';
import { SableError } from '../../errors/codes.js';
import { FileError } from '../../errors/job-errors.js';
import type { JobQueue } from '../../jobs/queue.js';
import { failedFile, newFile, type FileRecord, type JobRecord } from '../../jobs/records.js';
import { finish, Interrupted, type JobContext, type JobHandler } from '../../jobs/runner.js';
import type { Embedder } from '../../retrieval/embeddings/embedder.js';
import type { VectorWrites } from '../../retrieval/vectors.js';
import type { StagedFile } from '../../objects/object-store.js';
import type { Chunk } from '../parse/chunker.js';
import type { Selectors } from '../parse/formats/html.js';
import type { ParsePool } from '../parse/parse-pool.js';
import type { Connector, ConnectorContext, Connectors } from '../connectors/connector.js';
import { chunkId, type DocumentRecord, type DocumentStore } from '../../catalog/documents/store.js';
import type { ScheduleRecords } from '../schedules/store.js';
import type { SourceRecord, SourceStore } from '../sources/store.js';
import { chunkingFor } from './budget.js';

export interface IngestOptions {
  /** Wall time of one file: fetch, parse, embed, upsert. */
  fileTimeoutMs: number;
  /** Wall time of parsing and chunking one file (its thread is ended past it). */
  parseTimeoutMs: number;
  /** Files in flight at once. */
  concurrency: number;
  /** Chunks per embedding call and upsert. */
  batchChunks: number;
}

export const DEFAULT_INGEST: IngestOptions = { fileTimeoutMs: 15 * 60_000, parseTimeoutMs: 2 * 60_000, concurrency: 2, batchChunks: 128 };

/** The deletion guard: more than this many documents, and more than this share of the source's. */
const GUARD_COUNT = 10;
const GUARD_SHARE = 0.2;

/** Where the time of a pipeline goes (for metrics and the benchmark). */
export type StageObserver = (stage: 'fetch' | 'parse' | 'chunk' | 'embed' | 'index', ms: number, items: number) => void;

export interface IngestDeps {
  queue: JobQueue;
  sources: SourceStore;
  connectors: Connectors;
  documents: DocumentStore;
  datasets: DatasetService;
  embedder: Embedder;
  writes: VectorWrites;
  parse: ParsePool;
  schedules: ScheduleRecords;
  observe?: StageObserver;
}

interface Run {
  job: JobRecord;
  source: SourceRecord;
  connector: Connector;
  record: DatasetRecord;
  cctx: ConnectorContext;
  ctx: JobContext;
  incremental: boolean;
  t0: number;
}

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
    const run: Run = { job, source, connector, record, cctx, ctx, incremental: config.sync_mode === 'incremental', t0 };

    try {
      if (!job.discovered) await this.discover(run);
      await this.processAll(run);
      if (ctx.stopping()) throw new Interrupted();
      const current = (await q.get(job.job_id))!;
      if (current.full_listing) await this.removeGone(run);
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
    await this.conclude(job.job_id, t0);
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

  /** Files that were being processed when the job stopped start over. */
  private async resume(job: JobRecord): Promise<void> {
    const processing = (await this.d.queue.files(job.job_id)).filter((f) => f.status === 'processing');
    await this.d.queue.put(
      { ...job, message: 'resumed after the service restarted' },
      processing.map((f) => ({ ...f, status: 'pending', retry_count: f.retry_count + 1, status_reason: 'restarted after the service stopped' })),
    );
  }

  /** Lists the source's items as the job's files (a full listing). */
  private async discover(run: Run): Promise<void> {
    const q = this.d.queue;
    await q.update(run.job.job_id, (j) => ({ ...j, current_step: `listing ${run.source.type} source ${run.source.name}` }));
    const files: FileRecord[] = [];
    try {
      for await (const item of run.connector.list(run.cctx)) {
        if (run.ctx.stopping()) throw new Interrupted();
        files.push({
          ...newFile({ jobId: run.job.job_id, fileId: crypto.randomUUID(), position: files.length, name: item.name, key: item.path, size: item.size ?? 0, contentType: item.contentType }),
          item: { id: item.id, url: item.url, version: item.version },
        });
      }
    } catch (e) {
      if (e instanceof Interrupted || e instanceof SableError) throw e;
      throw new FileError('source_unreachable', `the source could not be listed: ${(e as Error).message}`);
    }
    const job = (await q.get(run.job.job_id))!;
    await q.put({ ...job, discovered: true, full_listing: true, files_confirmed: files.length, message: `${files.length} item(s) listed` }, files);
  }

  private async processAll(run: Run): Promise<void> {
    const pending = (await this.d.queue.files(run.job.job_id)).filter((f) => f.status === 'pending');
    const total = pending.length;
    let next = 0;
    let done = 0;
    const worker = async () => {
      while (next < pending.length) {
        if (run.ctx.stopping()) return;
        const file = pending[next++];
        await this.processFile(run, file, `${next} of ${total}`);
        done++;
        const pct = total === 0 ? 99.9 : Math.min(99.9, Math.round((1000 * done) / total) / 10);
        await this.d.queue.update(run.job.job_id, (j) => ({ ...j, progress_percentage: pct, processing_time_seconds: (Date.now() - run.t0) / 1000 }));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.opts.concurrency) }, worker));
  }

  private async processFile(run: Run, file: FileRecord, position: string): Promise<void> {
    const { job, record, connector, source } = run;
    const q = this.d.queue;
    const fileT0 = Date.now();
    const itemId = file.item?.id ?? file.file_name;
    await q.updateFileAndJob(
      job.job_id,
      file.uuid,
      (f) => ({ ...f, status: 'processing', started_at: new Date().toISOString(), status_reason: null }),
      (j) => ({ ...j, current_step: `ingesting ${file.file_name} (${position})` }),
    );
    const bound = AbortSignal.timeout(this.opts.fileTimeoutMs);
    const stopped = () => run.ctx.stopping() || bound.aborted;
    let staged: StagedFile | undefined;
    let doc: DocumentRecord | undefined;
    const existing = this.d.documents.byItem(record.id, source.id, itemId);
    const fresh = () =>
      this.d.documents.fresh({
        dataset_id: record.id, org_id: job.org_id, source_id: source.id, source_type: source.type, item_id: itemId,
        name: file.file_name, path: file.file_path, url: file.item?.url ?? null, content_type: file.content_type, size_bytes: file.file_size_bytes,
      });
    try {
      const maxBytes = connector.maxBytes(run.cctx.config);
      if (file.file_size_bytes > maxBytes) {
        const why = `${file.file_size_bytes} bytes; this source's limit is ${maxBytes}`;
        if (connector.oversize === 'skip') return await this.skip(run, file, null, fileT0, `file_too_large: ${why}`);
        throw new FileError('file_too_large', why);
      }
      const version = file.item?.version ?? null;
      if (run.incremental && existing?.status === 'ready' && version !== null && existing.version === version) {
        return await this.skip(run, file, existing, fileT0, 'unchanged (the source reports the same version)');
      }
      let t = Date.now();
      staged = await connector.fetch({ ...run.cctx, signal: AbortSignal.any([run.cctx.signal, bound]) }, file).catch((e: unknown) => {
        if (e instanceof FileError || e instanceof SableError || e instanceof Interrupted || bound.aborted) throw e;
        throw new FileError('source_unreachable', (e as Error)?.message ?? String(e));
      });
      const hash = await sha256(staged.path);
      this.d.observe?.('fetch', Date.now() - t, 1);
      if (run.incremental && existing?.status === 'ready' && existing.content_hash === hash) {
        return await this.skip(run, file, existing, fileT0, 'unchanged (same content)');
      }
      doc = existing ?? fresh();
      doc = { ...doc, status: 'processing', job_id: job.job_id, size_bytes: file.file_size_bytes, content_type: file.content_type, url: file.item?.url ?? doc.url };
      await this.d.documents.put(doc);

      const parsed = await this.d.parse.parse(
        { path: staged.path, name: file.file_name, contentType: file.content_type, maxBytes, selectors: run.cctx.config.selectors as Selectors | undefined, chunking: chunkingFor(record.embedding.provider) },
        Math.min(this.opts.parseTimeoutMs, Math.max(1, this.opts.fileTimeoutMs - (Date.now() - fileT0))),
      );
      if (!parsed.ok) throw new FileError(parsed.type, parsed.message);
      this.d.observe?.('parse', parsed.parseMs, 1);
      this.d.observe?.('chunk', parsed.chunkMs, parsed.chunks.length);

      // While it is processing, chunk_count bounds the chunk ids that may be in the index (the old
      // version's and the new one's), so a failure or a crash at any point can take them all out.
      const upTo = Math.max(doc.chunk_count, parsed.chunks.length);
      doc = { ...doc, chunk_count: upTo };
      await this.d.documents.put(doc);
      const tokens = await this.embedAndIndex(run, doc, parsed.chunks, stopped);
      if (upTo > parsed.chunks.length) {
        const stale = Array.from({ length: upTo - parsed.chunks.length }, (_, i) => chunkId(doc!.id, parsed.chunks.length + i));
        await this.d.writes.delete(record, { ids: stale });
      }
      t = Date.now();
      await this.d.documents.put({
        ...doc,
        status: 'ready',
        title: parsed.title,
        format: parsed.format,
        content_hash: hash,
        version,
        chunk_count: parsed.chunks.length,
        tokens,
        pages: parsed.pages,
        storage_key: connector.retainsOriginals ? (file.storage_key ?? file.item?.version ?? null) : null,
        error_type: null,
        error_message: null,
      });
      const chunks = parsed.chunks.length;
      await q.updateFileAndJob(
        job.job_id,
        file.uuid,
        (f) => ({
          ...f,
          status: 'completed',
          status_reason: `${chunks} chunk${chunks === 1 ? '' : 's'} from ${parsed.format}${parsed.pages ? ` (${parsed.pages} pages)` : ''}`,
          chunks_created: chunks,
          embeddings_generated: chunks,
          vectors_inserted: chunks,
          processing_duration_ms: Date.now() - fileT0,
          completed_at: new Date().toISOString(),
          document_id: doc!.id,
        }),
        (j) => ({ ...j, documents_processed: j.documents_processed + 1, vectors_inserted: j.vectors_inserted + chunks }),
      );
    } catch (e) {
      if (e instanceof Interrupted && !bound.aborted) throw e;
      const err = bound.aborted
        ? new FileError('timed_out', `the file took longer than ${Math.round(this.opts.fileTimeoutMs / 1000)} s`)
        : e instanceof FileError
          ? e
          : e instanceof SableError
            ? new FileError(e.code, e.message)
            : new FileError('internal', (e as Error)?.message ?? String(e));
      if (!(e instanceof FileError) && !(e instanceof SableError) && !(e instanceof Interrupted)) console.error(`sable: job ${job.job_id} file ${file.file_name}:`, e);
      // Before parsing (the size check, fetching), a document already in the catalog stays as it
      // is: a source that fails to answer once does not take its content out of search. A new
      // one is cataloged as failed.
      if (!doc && !existing) doc = { ...fresh(), job_id: job.job_id };
      if (doc) {
        // A failed document is not searchable: neither its old chunks nor the part of the new ones already indexed.
        if (doc.chunk_count > 0) await this.d.writes.delete(record, { ids: Array.from({ length: doc.chunk_count }, (_, i) => chunkId(doc!.id, i)) }).catch(() => undefined);
        // The original stays downloadable where the source retains it (to see what was wrong with it).
        const storage_key = connector.retainsOriginals ? (file.storage_key ?? file.item?.version ?? null) : null;
        await this.d.documents.put({ ...doc, status: 'failed', chunk_count: 0, storage_key, error_type: err.type, error_message: err.message });
      }
      await q.updateFile(job.job_id, file.uuid, (f) => ({ ...failedFile(f, err.type, err.message), processing_duration_ms: Date.now() - fileT0, ...(doc ? { document_id: doc.id } : {}) }));
    } finally {
      await staged?.release();
    }
  }

  /** Embeds the chunks in batches and upserts one vector per chunk; returns their tokens. */
  private async embedAndIndex(run: Run, doc: DocumentRecord, chunks: Chunk[], stopped: () => boolean): Promise<number> {
    const { record, job } = run;
    let tokens = 0;
    for (let at = 0; at < chunks.length; at += this.opts.batchChunks) {
      if (stopped()) throw new Interrupted();
      const batch = chunks.slice(at, at + this.opts.batchChunks);
      let t = Date.now();
      const vectors = await this.d.embedder.embed(job.org_id, { ...record.embedding, dim: record.dim }, batch.map((c) => c.text), 'document');
      this.d.observe?.('embed', Date.now() - t, batch.length);
      t = Date.now();
      await this.d.writes.insert(job.org_id, record, {
        vectors: batch.map((c, i) => ({ id: chunkId(doc.id, c.index), values: vectors[i], metadata: chunkMetadata(doc, c) })),
      });
      this.d.observe?.('index', Date.now() - t, batch.length);
      tokens += batch.reduce((s, c) => s + c.tokens, 0);
    }
    return tokens;
  }

  private async skip(run: Run, file: FileRecord, doc: DocumentRecord | null, fileT0: number, reason: string): Promise<void> {
    await this.d.queue.updateFile(run.job.job_id, file.uuid, (f) => ({
      ...f,
      status: 'skipped',
      status_reason: reason,
      processing_duration_ms: Date.now() - fileT0,
      completed_at: new Date().toISOString(),
      ...(doc ? { document_id: doc.id } : {}),
    }));
  }

  /** After a full listing: documents the source no longer holds lose their chunks (guarded). */
  private async removeGone(run: Run): Promise<void> {
    const { job, record, source } = run;
    const listed = new Set((await this.d.queue.files(job.job_id)).map((f) => f.item?.id ?? f.file_name));
    const docs = this.d.documents.ofSource(record.id, source.id);
    const gone = docs.filter((d) => !listed.has(d.item_id));
    if (gone.length === 0) return;
    if (gone.length > GUARD_COUNT && gone.length > GUARD_SHARE * docs.length) {
      await this.d.queue.update(job.job_id, (j) => ({ ...j, deletions_withheld: gone.length }));
      return;
    }
    for (const d of gone) {
      if (d.chunk_count > 0) await this.d.writes.delete(record, { ids: Array.from({ length: d.chunk_count }, (_, i) => chunkId(d.id, i)) });
    }
    await this.d.documents.remove(gone);
    await this.d.queue.update(job.job_id, (j) => ({ ...j, documents_deleted: gone.length }));
  }

  private async conclude(jobId: string, t0: number): Promise<void> {
    const files = await this.d.queue.files(jobId);
    const failed = files.filter((f) => f.status === 'failed');
    const completed = files.filter((f) => f.status === 'completed');
    const skipped = files.filter((f) => f.status === 'skipped');
    await this.d.queue.update(jobId, (j) => {
      const errors = failed.length > 0
        ? {
            type: failed.length === 1 ? failed[0].error_type! : ('files_failed' as const),
            message: failed.length === 1 ? `${failed[0].file_name}: ${failed[0].error_message}` : `${failed.length} of ${files.length} files failed`,
            files: failed.map((f) => ({ file_id: f.uuid, file_name: f.file_name, error_type: f.error_type ?? 'internal', error_message: f.error_message ?? '' })),
          }
        : null;
      const withheld = j.deletions_withheld > 0
        ? `; ${j.deletions_withheld} document(s) gone from the source were not deleted: more than ${GUARD_COUNT} and over ${GUARD_SHARE * 100}% of the source's (a partial listing?); run again to retry`
        : '';
      const removed = j.documents_deleted > 0 ? `, ${j.documents_deleted} removed` : '';
      if (files.length === 0 && !j.full_listing) return finish(j, 'failed', { type: 'no_files', message: 'no file was confirmed for this job' }, t0);
      if (failed.length > 0 && completed.length === 0 && skipped.length === 0) return finish(j, 'failed', errors, t0);
      const done = finish(j, 'completed', errors, t0);
      const unchanged = skipped.filter((f) => f.status_reason?.startsWith('unchanged')).length;
      const passedOver = skipped.length > unchanged ? `, ${skipped.length - unchanged} skipped` : '';
      done.message = `${completed.length} document(s) ingested, ${unchanged} unchanged, ${failed.length} failed${passedOver}${removed}; ${j.vectors_inserted} chunks${withheld}`;
      return done;
    });
  }

  /** The runner ended the job (time bound, attempts): documents it left processing end failed. */
  async abandoned(job: JobRecord): Promise<void> {
    await this.failDocuments(job, job.error_details?.type ?? 'internal', job.error_details?.message ?? 'the job ended');
  }

  private async failDocuments(job: JobRecord, type: string, message: string): Promise<void> {
    const left = this.d.documents.processingOf(job.dataset_id, job.job_id);
    let record: DatasetRecord | undefined;
    try {
      record = this.d.datasets.get(job.org_id, job.dataset_id);
    } catch {
      // The dataset is gone, and its vectors with it.
    }
    for (const doc of left) {
      // Whatever part of it was indexed leaves search with it (chunk_count bounds it while processing).
      if (record && doc.chunk_count > 0) await this.d.writes.delete(record, { ids: Array.from({ length: doc.chunk_count }, (_, i) => chunkId(doc.id, i)) }).catch(() => undefined);
      await this.d.documents.put({ ...doc, status: 'failed', chunk_count: 0, error_type: type, error_message: message });
    }
  }

  private async failJob(job: JobRecord, type: string, message: string, t0: number): Promise<void> {
    const files = await this.d.queue.files(job.job_id);
    const current = (await this.d.queue.get(job.job_id))!;
    await this.d.queue.put(
      finish(current, 'failed', { type: type as never, message }, t0),
      files.filter((f) => f.status === 'pending' || f.status === 'processing').map((f) => failedFile(f, type as never, message)),
    );
    await this.failDocuments(job, type, message);
  }
}

/** What a chunk's vector carries: its text (documents, hybrid search) and its provenance. */
function chunkMetadata(doc: DocumentRecord, c: Chunk): Record<string, string | number> {
  const m: Record<string, string | number | null | undefined> = {
    text: c.text,
    document_id: doc.id,
    chunk_index: c.index,
    name: doc.name,
    path: doc.path,
    url: doc.url,
    content_type: doc.content_type,
    source_id: doc.source_id,
    source_type: doc.source_type,
    heading: c.heading,
    page: c.page,
    page_end: c.pageEnd !== c.page ? c.pageEnd : null,
    sheet_name: c.sheet,
    row_start: c.rowStart,
    row_end: c.rowEnd,
    column_names: c.columnNames?.join(', '),
    char_start: c.charStart,
    char_end: c.charEnd,
  };
  return Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null && v !== undefined)) as Record<string, string | number>;
}

function sha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}
