/**
 * A failed document is not searchable: neither its old chunks nor the part of the new ones
 * already indexed stay (while it is processing, chunk_count bounds them both), and the catalog
 * records it failed with the reason. Used for one file that failed, and for the documents a job
 * left processing when it ended without finishing them.
 */
import type { DatasetRecord } from '../../catalog/datasets/record.js';
import type { DocumentRecord } from '../../catalog/documents/store.js';
import type { JobRecord } from '../../jobs/records.js';
import { deleteChunks } from './chunk-writes.js';
import type { IngestDeps } from './run.js';

type Deps = Pick<IngestDeps, 'writes' | 'documents' | 'datasets'>;

/** `record` is absent when the dataset is gone (its vectors went with it); `storageKey` where the original stays kept, when that changes. */
export async function failDocument(deps: Deps, record: DatasetRecord | undefined, doc: DocumentRecord, error: { type: string; message: string }, storageKey?: string | null): Promise<void> {
  if (record) await deleteChunks(deps.writes, record, doc).catch(() => undefined);
  await deps.documents.fail(doc, error, storageKey);
}

/** The job ended (failed, time bound, attempts): documents it left processing end failed. */
export async function failLeftDocuments(deps: Deps, job: JobRecord, type: string, message: string): Promise<void> {
  const left = deps.documents.processingOf(job.dataset_id, job.job_id);
  let record: DatasetRecord | undefined;
  try {
    record = deps.datasets.get(job.org_id, job.dataset_id);
  } catch {
    // The dataset is gone, and its vectors with it.
  }
  for (const doc of left) await failDocument(deps, record, doc, { type, message });
}
