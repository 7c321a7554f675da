/**
 * Parquet bulk loads, as their files arrive: presigned (init, PUT each file, complete) or in one
 * multipart request whose `files` parts stream to storage as busboy reads them.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { DatasetService } from '../catalog/datasets/service.js';
import { badRequest, SableError } from '../errors/codes.js';
import type { JobQueue } from '../jobs/queue.js';
import { newFile, newJob, queued, type FileRecord } from '../jobs/records.js';
import type { JobRunner } from '../jobs/runner.js';
import { mediaType, type FileDeclared, type Upload, type UploadJobs } from '../jobs/uploads.js';
import { MAX_FILE_BYTES, MAX_FILES_PER_JOB, SizeMismatch, type ObjectStore } from '../objects/object-store.js';

export interface BulkUploadInit {
  files: FileDeclared[];
  validate_only?: boolean;
  idempotency_key?: string;
}

/** A multipart request's body and its headers (Content-Type carries the boundary). */
export interface MultipartBody {
  headers: Record<string, string>;
  stream: Readable;
}

export class BulkUploads {
  constructor(
    private readonly datasets: DatasetService,
    private readonly jobs: JobQueue,
    private readonly uploads: UploadJobs,
    private readonly runner: JobRunner,
    private readonly objects: ObjectStore,
  ) {}

  /** A load waiting for its files: one signed URL each, at `uploadBase` when the local store signs them. */
  async init(orgId: string, datasetId: string, b: BulkUploadInit, uploadBase: string): Promise<{ job_id: string; uploads: Upload[] }> {
    const r = this.datasets.get(orgId, datasetId);
    const idempotency = b.idempotency_key ? { orgId, datasetId: r.id, key: b.idempotency_key } : undefined;
    const job = newJob({ kind: 'parquet', orgId, datasetId: r.id, validateOnly: b.validate_only ?? false, idempotencyKey: b.idempotency_key ?? null });
    return this.uploads.init(job, b.files, { prefix: r.id, uploadBase, idempotency });
  }

  /** Confirms the listed files whose bytes arrived and starts the load. */
  async complete(orgId: string, datasetId: string, jobId: string, fileIds: string[]): Promise<{ confirmed: number }> {
    const r = this.datasets.get(orgId, datasetId);
    const job = await this.uploads.owned(jobId, orgId, (j) => j.dataset_id === r.id && j.kind === 'parquet', `dataset ${r.id}`);
    const confirmed = await this.uploads.complete(job, fileIds);
    this.runner.wake();
    return { confirmed };
  }

  /** A load whose files came in one multipart request: queued once every part is stored. */
  async receive(orgId: string, datasetId: string, body: MultipartBody): Promise<{ job_id: string; files_received: number; status_url: string }> {
    const r = this.datasets.get(orgId, datasetId);
    if (!mediaType(body.headers['content-type']).startsWith('multipart/form-data')) {
      throw new SableError('unsupported_media_type', 'send multipart/form-data with the files in fields named `files`');
    }
    const job = newJob({ kind: 'parquet', orgId, datasetId: r.id, validateOnly: false, idempotencyKey: null });
    const files = await receiveMultipart(body, (fileId) => `${r.id}/${job.job_id}/${fileId}`, job.job_id, this.objects, (v) => (job.validate_only = v));
    if (files.length === 0) throw badRequest('no file parts named `files` were sent');
    await this.jobs.create(queued(job, files.length, `${files.length} file(s) received`), files);
    this.runner.wake();
    return { job_id: job.job_id, files_received: files.length, status_url: `/v1/jobs/${job.job_id}` };
  }
}

/** Streams every `files` part of a multipart body into storage; returns their file records. */
function receiveMultipart(
  { headers, stream: body }: MultipartBody,
  keyOf: (fileId: string) => string,
  jobId: string,
  objects: ObjectStore,
  setValidateOnly: (v: boolean) => void,
): Promise<FileRecord[]> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers, limits: { files: MAX_FILES_PER_JOB + 1, fileSize: MAX_FILE_BYTES + 1 } });
    } catch (e) {
      return reject(badRequest(`the multipart body cannot be read: ${(e as Error).message}`));
    }
    const files: FileRecord[] = [];
    const writes: Promise<unknown>[] = [];
    const active = new Set<Readable>();
    let failure: SableError | null = null;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      void Promise.allSettled(writes).then(async () => {
        if (!failure) return resolve(files);
        await Promise.all(files.map((f) => objects.remove(f.file_path).catch(() => {})));
        reject(failure);
      });
    };
    const fail = (e: SableError) => {
      if (failure) return;
      failure = e;
      body.unpipe(parser);
      for (const s of active) s.destroy(e);
      finish();
    };
    parser.on('field', (name, value) => {
      if (name === 'validate_only') setValidateOnly(value === 'true');
    });
    parser.on('file', (name, stream, info) => {
      // busboy destroys the part's stream with an error when the form ends early, possibly before
      // storage has piped it anywhere: unheard, that error ended the process. The parser's own
      // 'error' event and the storage write report it.
      stream.on('error', () => {});
      if (failure || name !== 'files') return void stream.resume();
      if (files.length === MAX_FILES_PER_JOB) {
        stream.resume();
        return fail(badRequest(`at most ${MAX_FILES_PER_JOB} files per job`));
      }
      const id = randomUUID();
      const record = newFile({ jobId, fileId: id, position: files.length, name: info.filename ?? `file-${files.length + 1}`, key: keyOf(id), size: 0, contentType: info.mimeType });
      files.push(record);
      active.add(stream);
      writes.push(
        objects.put(record.file_path, stream, { max: MAX_FILE_BYTES }, info.mimeType).then(
          (n) => {
            active.delete(stream);
            record.file_size_bytes = n;
            record.uploaded_at = new Date().toISOString();
          },
          (e: Error) => {
            active.delete(stream);
            fail(e instanceof SizeMismatch ? new SableError('payload_too_large', `file ${record.file_name}: ${e.message}`) : badRequest(`file ${record.file_name}: ${e.message}`));
          },
        ),
      );
    });
    parser.on('error', (e: Error) => fail(badRequest(`the multipart body cannot be read: ${e.message}`)));
    parser.on('close', finish);
    body.on('error', (e) => fail(badRequest(`the upload broke off: ${e.message}`)));
    body.pipe(parser);
  });
}
