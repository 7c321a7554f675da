/**
 * Jobs whose files arrive through presigned uploads (Parquet bulk loads, a file_upload source):
 * init creates the job and its files with one signed URL each, complete confirms the files whose
 * bytes arrived with their declared size and queues the job. Files not listed are skipped; a
 * listed file without its bytes fails (upload_missing, size_mismatch). When the local store
 * signs the URLs, receivePut takes the bytes PUT to one, for both kinds of job.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { badRequest, SableError } from '../errors/codes.js';
import { SizeMismatch, UPLOAD_URL_SECONDS, type ObjectStore } from '../objects/object-store.js';
import type { UploadSigner } from '../objects/signer.js';
import type { IdempotencyKey, JobQueue } from './queue.js';
import { failedFile, finish, newFile, queued, type FileRecord, type JobRecord } from './records.js';

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

/** A request's body PUT to a signed URL, with the headers the URL's terms are checked against. */
export interface PutBody {
  stream: Readable;
  contentType: string | undefined;
  contentLength: string | undefined;
  /** Aborted when the client leaves mid-body. */
  signal?: AbortSignal;
}

/** The media type of a Content-Type header, as compared with the one given at init. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

export class UploadJobs {
  constructor(
    private readonly jobs: JobQueue,
    private readonly objects: ObjectStore,
    /** Present when the local store signs its own URLs (no object storage configured). */
    private readonly signer?: UploadSigner,
  ) {}

  /** Whether the upload URLs point back at this service, which then takes their PUTs. */
  get takesPuts(): boolean {
    return this.signer !== undefined;
  }

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

  /**
   * The bytes PUT to a URL the local store signed: the token's terms (content type, exact size,
   * expiry) kept, the file of a job still waiting for them. Anything else is 403 forbidden.
   */
  async receivePut(token: string, body: PutBody): Promise<{ file_id: string; size_bytes: number }> {
    const t = this.signer?.verify(token);
    if (!t) throw new SableError('forbidden', 'the upload URL is not valid');
    if (Date.now() / 1000 > t.expiresAt) throw new SableError('forbidden', 'the upload URL has expired; call upload/init again');
    if (mediaType(body.contentType) !== mediaType(t.contentType)) {
      throw new SableError('forbidden', `the Content-Type must be '${t.contentType}', as given at init`);
    }
    const declared = body.contentLength;
    if (declared !== undefined && Number(declared) !== t.sizeBytes) {
      throw new SableError('forbidden', `the body must be exactly ${t.sizeBytes} bytes, as given at init (Content-Length ${declared})`);
    }
    const job = await this.jobs.get(t.jobId);
    const file = await this.jobs.file(t.jobId, t.fileId);
    if (!job || !file) throw new SableError('forbidden', 'the upload this URL was made for no longer exists');
    if (job.confirmed) throw new SableError('forbidden', 'upload/complete was already called for this job; its files are closed');
    if (job.status !== 'pending') throw new SableError('forbidden', `the job has ended (${job.status}); its files are closed`);
    try {
      await this.objects.put(t.key, body.stream, { exact: t.sizeBytes }, t.contentType);
    } catch (e) {
      if (e instanceof SizeMismatch) throw new SableError('forbidden', `${e.message}, as given at init`);
      // The client left mid-body (node:http says so with ECONNRESET): not a fault of the
      // service, which logged and counted it as a 500.
      if (body.signal?.aborted || (e as NodeJS.ErrnoException).code === 'ECONNRESET') throw badRequest(`the upload broke off: ${(e as Error).message}`);
      throw e;
    }
    await this.jobs.updateFile(t.jobId, t.fileId, (f) => ({ ...f, uploaded_at: new Date().toISOString() }));
    return { file_id: t.fileId, size_bytes: t.sizeBytes };
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
