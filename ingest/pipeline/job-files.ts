/**
 * An ingest job's files in the queue as each is processed: taken (the job's step names it),
 * skipped with a reason, completed with what it became (the job's counters follow), or failed
 * with a typed reason; each links the catalog document it became, when there is one.
 */
import type { DocumentRecord } from '../../catalog/documents/store.js';
import type { FileError } from '../../errors/job-errors.js';
import { failedFile, startedFile, type FileRecord } from '../../jobs/records.js';
import type { Run } from './run.js';

export function fileStarted(run: Run, file: FileRecord, position: string): Promise<void> {
  return run.deps.queue.updateFileAndJob(run.job.job_id, file.uuid, startedFile, (j) => ({ ...j, current_step: `ingesting ${file.file_name} (${position})` }));
}

export async function fileSkipped(run: Run, file: FileRecord, doc: DocumentRecord | null, fileT0: number, reason: string): Promise<void> {
  await run.deps.queue.updateFile(run.job.job_id, file.uuid, (f) => ({
    ...f,
    status: 'skipped',
    status_reason: reason,
    processing_duration_ms: Date.now() - fileT0,
    completed_at: new Date().toISOString(),
    ...(doc ? { document_id: doc.id } : {}),
  }));
}

export async function fileCompleted(run: Run, file: FileRecord, doc: DocumentRecord, parsed: { chunks: number; format: string; pages: number | null }, fileT0: number): Promise<void> {
  const { chunks, format, pages } = parsed;
  await run.deps.queue.updateFileAndJob(
    run.job.job_id,
    file.uuid,
    (f) => ({
      ...f,
      status: 'completed',
      status_reason: `${chunks} chunk${chunks === 1 ? '' : 's'} from ${format}${pages ? ` (${pages} pages)` : ''}`,
      chunks_created: chunks,
      embeddings_generated: chunks,
      vectors_inserted: chunks,
      processing_duration_ms: Date.now() - fileT0,
      completed_at: new Date().toISOString(),
      document_id: doc.id,
    }),
    (j) => ({ ...j, documents_processed: j.documents_processed + 1, vectors_inserted: j.vectors_inserted + chunks }),
  );
}

export async function fileFailed(run: Run, file: FileRecord, err: FileError, doc: DocumentRecord | undefined, fileT0: number): Promise<void> {
  await run.deps.queue.updateFile(run.job.job_id, file.uuid, (f) => ({ ...failedFile(f, err.type, err.message), processing_duration_ms: Date.now() - fileT0, ...(doc ? { document_id: doc.id } : {}) }));
}
