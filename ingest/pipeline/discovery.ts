/**
 * Listing a source: each item its connector lists (a stable id, a URL, a change signal) becomes
 * one of the job's files, and the job records a full listing, whose absent items are documents
 * gone from the source.
 */
import { SableError } from '../../errors/codes.js';
import { FileError } from '../../errors/job-errors.js';
import { newFile, type FileRecord } from '../../jobs/records.js';
import { Interrupted } from '../../jobs/runner.js';
import type { Run } from './run.js';

export async function discover(run: Run): Promise<void> {
  const q = run.deps.queue;
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
