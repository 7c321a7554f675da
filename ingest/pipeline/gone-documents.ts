/**
 * After a full listing, documents the source no longer holds lose their chunks and their catalog
 * entries, unless that would remove more than 10 documents and more than 20% of what the source
 * brought in (a flaky listing): then the deletions are withheld and the job says so.
 */
import type { JobRecord } from '../../jobs/records.js';
import { deleteChunks } from './chunk-writes.js';
import type { Run } from './run.js';

/** The deletion guard: more than this many documents, and more than this share of the source's. */
const GUARD_COUNT = 10;
const GUARD_SHARE = 0.2;

export async function removeGone(run: Run): Promise<void> {
  const { deps, job, record, source } = run;
  const listed = new Set((await deps.queue.files(job.job_id)).map((f) => f.item?.id ?? f.file_name));
  const docs = deps.documents.ofSource(record.id, source.id);
  const gone = docs.filter((d) => !listed.has(d.item_id));
  if (gone.length === 0) return;
  if (gone.length > GUARD_COUNT && gone.length > GUARD_SHARE * docs.length) {
    await deps.queue.update(job.job_id, (j) => ({ ...j, deletions_withheld: gone.length }));
    return;
  }
  for (const d of gone) await deleteChunks(deps.writes, record, d);
  await deps.documents.remove(gone);
  await deps.queue.update(job.job_id, (j) => ({ ...j, documents_deleted: gone.length }));
}

/** What the job's message adds when the guard withheld deletions (empty when it did not). */
export function withheldNote(j: JobRecord): string {
  if (j.deletions_withheld <= 0) return '';
  return `; ${j.deletions_withheld} document(s) gone from the source were not deleted: more than ${GUARD_COUNT} and over ${GUARD_SHARE * 100}% of the source's (a partial listing?); run again to retry`;
}
