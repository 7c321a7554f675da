/**
 * Jobs whose files arrive through presigned uploads (Parquet bulk loads, a file_upload source):
 * init creates the job and its files with one signed URL each, complete confirms the files whose
 * bytes arrived with their declared size and queues the job. Files not listed are skipped; a
 * listed file without its bytes fails (upload_missing, size_mismatch).
 */
import { randomUUID } from 'node:crypto';
import { badRequest, SableError } from '../errors/codes.js';
import { UPLOAD_URL_SECONDS, type ObjectStore } from '../objects/object-store.js';
import type { IdempotencyKey, JobQueue } from './queue.js';
import { failedFile, newFile, queued, type FileRecord, type JobRecord } from './records.js';
import { finish } from './runner.js';

export interface FileDeclared {
  name: string;
  size_bytes: number;
  content_type: string;
}

export interface Upload {
  file_id: string;
  upload_url: string;
  expires_in: number;
}

export class UploadJobs {
  constructor(
    private readonly jobs: JobQueue,
    private readonly objects: ObjectStore,
  ) {}

  /**
   * A job waiting for its files' bytes. `prefix` is where they are stored (each file at
   * prefix/job/file); with an idempotency key, a repeated call answers the job the first made.
   */
  async init(
    job: JobRecord,
    files: FileDeclared[],
    o: { prefix: string; uploadBase: string; idempotency?: IdempotencyKey; pathIsName?: boolean },
  ): Promise<{ job_id: string; uploads: Upload[] }> {
    const { prefix, uploadBase, idempotency } = o;
    if (idempotency) {
      const existing = await this.jobs.byIdempotencyKey(idempotency);
      if (existing && (await this.jobs.get(existing))) return { job_id: existing, uploads: await this.urls(existing, uploadBase) };
    }
    job.current_step = 'awaiting upload';
    job.message = `waiting for ${files.length} file(s) and upload/complete`;
    const records = files.map((f, position) => {
      const id = randomUUID();
      const key = `${prefix}/${job.job_id}/${id}`;
      return newFile({ jobId: job.job_id, fileId: id, position, name: f.name, key, ...(o.pathIsName ? { path: f.name } : {}), size: f.size_bytes, contentType: f.content_type });
    });
    await this.jobs.create(job, records, idempotency);
    return { job_id: job.job_id, uploads: await this.urls(job.job_id, uploadBase) };
  }

  /** Fresh signed URLs for every file of a job. */
  async urls(jobId: string, uploadBase: string): Promise<Upload[]> {
    const expiresAt = Math.floor(Date.now() / 1000) + UPLOAD_URL_SECONDS;
    return (await this.jobs.files(jobId)).map((f) => ({
      file_id: f.uuid,
      upload_url: this.objects.presignPut({ key: storageKeyOf(f), contentType: f.content_type, sizeBytes: f.file_size_bytes, jobId, fileId: f.uuid, expiresAt }, uploadBase),
      expires_in: UPLOAD_URL_SECONDS,
    }));
  }

  /** Confirms the listed files whose bytes arrived; queues the job. A repeated call answers the same count. */
  async complete(job: JobRecord, fileIds: string[]): Promise<number> {
    if (job.confirmed) return job.files_confirmed ?? 0;
    const files = await this.jobs.files(job.job_id);
    const byId = new Map(files.map((f) => [f.uuid, f]));
    const unknown = fileIds.filter((id) => !byId.has(id));
    if (unknown.length > 0) throw badRequest(`file_ids not in job ${job.job_id}: ${unknown.slice(0, 5).join(', ')}`);
    const listed = new Set(fileIds);
    let confirmed = 0;
    const now = new Date().toISOString();
    const settled: FileRecord[] = [];
    for (const f of files) {
      if (!listed.has(f.uuid)) {
        settled.push({ ...f, status: 'skipped', status_reason: 'not listed in upload/complete', completed_at: now });
        continue;
      }
      const size = await this.objects.size(storageKeyOf(f));
      if (size === null) settled.push(failedFile(f, 'upload_missing', 'no bytes were uploaded for this file'));
      else if (size !== f.file_size_bytes) settled.push(failedFile(f, 'size_mismatch', `${size} bytes were uploaded; ${f.file_size_bytes} were declared`));
      else {
        settled.push({ ...f, uploaded_at: f.uploaded_at ?? now });
        confirmed++;
      }
    }
    await this.jobs.put(queued(job, confirmed, `${confirmed} file(s) confirmed`), settled);
    return confirmed;
  }

  /**
   * After a dataset is deleted: the stored files of its bulk loads (Parquet jobs) go with it, and
   * a load still waiting for its upload ends failed, so its URLs take no more bytes. Uploads of
   * file_upload sources stay: they belong to their source, whose later jobs ingest them again.
   * Resolves with how many files were removed.
   */
  async removeDataset(datasetId: string): Promise<number> {
    let removed = 0;
    for (const job of await this.jobs.ofDataset(datasetId)) {
      if (job.kind !== 'parquet') continue;
      const files = await this.jobs.files(job.job_id);
      if (job.status === 'pending' && !job.confirmed) {
        const message = 'the dataset was deleted before the upload was completed';
        await this.jobs.put(
          finish(job, 'failed', { type: 'dataset_unavailable', message }),
          files.filter((f) => f.status === 'pending').map((f) => failedFile(f, 'dataset_unavailable', message)),
        );
      }
      for (const f of files) {
        await this.objects.remove(storageKeyOf(f));
        removed++;
      }
    }
    return removed;
  }

  /** The job of an upload/complete call, or job_not_found (another org's, another dataset's). */
  async owned(jobId: string, orgId: string, check: (j: JobRecord) => boolean, what: string): Promise<JobRecord> {
    const job = await this.jobs.get(jobId);
    if (!job || job.org_id !== orgId || !check(job)) throw new SableError('job_not_found', `job ${jobId} was not found for ${what}`);
    return job;
  }
}

/** Where a file's bytes are stored. */
export function storageKeyOf(f: FileRecord): string {
  return f.storage_key ?? f.file_path;
}
