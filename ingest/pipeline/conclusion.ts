/**
 * How an ingest job ends once its files did: failed when no file was found for an upload, or
 * when every file failed; completed otherwise (failed files listed in its error), with a message
 * that counts documents ingested, unchanged, failed, skipped and removed, and says when the
 * deletion guard withheld deletions.
 */
import type { JobQueue } from '../../jobs/queue.js';
import { concludeFromFiles, finish } from '../../jobs/records.js';
import { withheldNote } from './gone-documents.js';

export async function conclude(queue: JobQueue, jobId: string, t0: number): Promise<void> {
  const files = await queue.files(jobId);
  const { completed, failed, skipped, error } = concludeFromFiles(files);
  await queue.update(jobId, (j) => {
    const removed = j.documents_deleted > 0 ? `, ${j.documents_deleted} removed` : '';
    if (files.length === 0 && !j.full_listing) return finish(j, 'failed', { type: 'no_files', message: 'no file was confirmed for this job' }, t0);
    if (failed.length > 0 && completed.length === 0 && skipped.length === 0) return finish(j, 'failed', error, t0);
    const done = finish(j, 'completed', error, t0);
    const unchanged = skipped.filter((f) => f.status_reason?.startsWith('unchanged')).length;
    const passedOver = skipped.length > unchanged ? `, ${skipped.length - unchanged} skipped` : '';
    done.message = `${completed.length} document(s) ingested, ${unchanged} unchanged, ${failed.length} failed${passedOver}${removed}; ${j.vectors_inserted} chunks${withheldNote(j)}`;
    return done;
  });
}
