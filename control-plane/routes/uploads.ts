/**
 * Bulk upload of Parquet vectors (the contract's legacy-prefixed paths): presigned init, the
 * local store's PUT target, complete, and the one-step multipart upload.
 */
import { badRequest, SableError } from '../../errors/codes.js';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { DatasetService } from '../../catalog/datasets/service.js';
import type { JobQueue } from '../../jobs/queue.js';
import { newFile, newJob, queued, type FileRecord } from '../../jobs/records.js';
import type { JobRunner } from '../../jobs/runner.js';
import type { UploadJobs } from '../../jobs/uploads.js';
import { MAX_FILE_BYTES, MAX_FILES_PER_JOB, SizeMismatch, type ObjectStore } from '../../objects/object-store.js';
import type { UploadSigner } from '../../objects/signer.js';
import { route, type Route } from '../http/router.js';
import { json, type Request } from '../http/types.js';
import * as S from '../schemas/uploads.js';

export interface UploadDeps {
  datasets: DatasetService;
  jobs: JobQueue;
  uploads: UploadJobs;
  runner: JobRunner;
  objects: ObjectStore;
  /** Present when the local store signs its own URLs (no object storage configured). */
  signer?: UploadSigner;
  /** Base of the URLs the local store signs, for this request (the upload listener). */
  uploadBase: (req: Request) => string;
}

/** The media type of a Content-Type header, as compared with the one given at init. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

export function uploadRoutes(d: UploadDeps): Route[] {
  const routes: Route[] = [
    route({
      method: 'POST', path: '/datasets/:datasetId/upload/init', auth: 'key', summary: 'Start a Parquet upload: one presigned URL per file',
      body: S.UploadInit, responses: { 200: S.UploadInitAnswer },
      description:
        'Returns {job_id, uploads: [{file_id, upload_url, expires_in}]}. PUT each file to its upload_url with the ' +
        'Content-Type given here and exactly size_bytes bytes, without the API key (403 otherwise or after expiry), ' +
        'then call upload/complete. Limits: 5 GB per file, 1000 files per job. validate_only checks the files ' +
        '(vector column, dimension, finite values, ids) without loading them. A repeated init with the same ' +
        'idempotency_key returns the same job with fresh URLs. The contract spells the three upload paths with ' +
        'the legacy /v1 prefix (/v1/datasets/{datasetId}/upload/...); both forms route.',
      handler: async ({ req, caller, params, body: b }) => {
        const r = d.datasets.get(caller.orgId, params.datasetId);
        const idempotency = b.idempotency_key ? { orgId: caller.orgId, datasetId: r.id, key: b.idempotency_key } : undefined;
        const job = newJob({ kind: 'parquet', orgId: caller.orgId, datasetId: r.id, validateOnly: b.validate_only ?? false, idempotencyKey: b.idempotency_key ?? null });
        return json(200, await d.uploads.init(job, b.files, { prefix: r.id, uploadBase: d.uploadBase(req), idempotency }));
      },
    }),
    route({
      method: 'POST', path: '/datasets/:datasetId/upload/complete', auth: 'key', summary: 'Confirm uploaded files and start the load job',
      body: S.UploadComplete, responses: { 200: S.UploadCompleteAnswer },
      description:
        'Returns {confirmed}: the listed files whose bytes arrived with the declared size. A listed file without ' +
        'its bytes fails (error_type upload_missing or size_mismatch); files not listed are skipped. Calling it ' +
        'again answers the same count. Poll the job at /v1/jobs/{job_id}.',
      handler: async ({ caller, params, body: b }) => {
        const r = d.datasets.get(caller.orgId, params.datasetId);
        const job = await d.uploads.owned(b.job_id, caller.orgId, (j) => j.dataset_id === r.id && j.kind === 'parquet', `dataset ${r.id}`);
        const confirmed = await d.uploads.complete(job, b.file_ids);
        d.runner.wake();
        return json(200, { confirmed });
      },
    }),
    {
      method: 'POST', path: '/datasets/:datasetId/upload', auth: 'key', summary: 'Upload Parquet files in one multipart request and load them',
      stream: true, responses: { 202: S.MultipartAnswer },
      streamContent: S.multipartUpload,
      description:
        'multipart/form-data with one or more `files` parts (each a Parquet file with its content type); an optional ' +
        'field `validate_only` (true/false) before the files. Bytes stream to storage (5 GB per file, 1000 files). ' +
        'Answers 202 {job_id, files_received, status_url}; status_url is /v1/jobs/{job_id}.',
      handler: async ({ req, caller, params }) => {
        const r = d.datasets.get(caller.orgId, params.datasetId);
        if (!mediaType(req.headers['content-type']).startsWith('multipart/form-data')) {
          throw new SableError('unsupported_media_type', 'send multipart/form-data with the files in fields named `files`');
        }
        const job = newJob({ kind: 'parquet', orgId: caller.orgId, datasetId: r.id, validateOnly: false, idempotencyKey: null });
        const files = await receiveMultipart(req, (fileId) => `${r.id}/${job.job_id}/${fileId}`, job.job_id, d.objects, (v) => (job.validate_only = v));
        if (files.length === 0) throw badRequest('no file parts named `files` were sent');
        await d.jobs.create(queued(job, files.length, `${files.length} file(s) received`), files);
        d.runner.wake();
        return json(202, { job_id: job.job_id, files_received: files.length, status_url: `/v1/jobs/${job.job_id}` });
      },
    },
  ];

  if (d.signer) {
    const signer = d.signer;
    routes.push({
      method: 'PUT', path: '/uploads/:token', auth: 'none', summary: 'The presigned upload URL of the local store (raw bytes)',
      stream: true, responses: { 200: S.PutAnswer },
      streamContent: S.rawUpload,
      description:
        'Self-authenticating: no API key. The Content-Type must equal the one given at init and the body must be ' +
        'exactly size_bytes bytes; otherwise, or after the hour, 403 forbidden. Answers {file_id, size_bytes}.',
      handler: async ({ req, params }) => {
        const t = signer.verify(params.token);
        if (!t) throw new SableError('forbidden', 'the upload URL is not valid');
        if (Date.now() / 1000 > t.expiresAt) throw new SableError('forbidden', 'the upload URL has expired; call upload/init again');
        if (mediaType(req.headers['content-type']) !== mediaType(t.contentType)) {
          throw new SableError('forbidden', `the Content-Type must be '${t.contentType}', as given at init`);
        }
        const declared = req.headers['content-length'];
        if (declared !== undefined && Number(declared) !== t.sizeBytes) {
          throw new SableError('forbidden', `the body must be exactly ${t.sizeBytes} bytes, as given at init (Content-Length ${declared})`);
        }
        const job = await d.jobs.get(t.jobId);
        const file = await d.jobs.file(t.jobId, t.fileId);
        if (!job || !file) throw new SableError('forbidden', 'the upload this URL was made for no longer exists');
        if (job.confirmed) throw new SableError('forbidden', 'upload/complete was already called for this job; its files are closed');
        if (job.status !== 'pending') throw new SableError('forbidden', `the job has ended (${job.status}); its files are closed`);
        try {
          await d.objects.put(t.key, req.stream!, { exact: t.sizeBytes }, t.contentType);
        } catch (e) {
          if (e instanceof SizeMismatch) throw new SableError('forbidden', `${e.message}, as given at init`);
          // The client left mid-body (node:http says so with ECONNRESET): not a fault of the
          // service, which logged and counted it as a 500.
          if (req.signal?.aborted || (e as NodeJS.ErrnoException).code === 'ECONNRESET') throw badRequest(`the upload broke off: ${(e as Error).message}`);
          throw e;
        }
        await d.jobs.updateFile(t.jobId, t.fileId, (f) => ({ ...f, uploaded_at: new Date().toISOString() }));
        return json(200, { file_id: t.fileId, size_bytes: t.sizeBytes });
      },
    });
  }
  return routes;
}

/** Streams every `files` part of a multipart body into storage; returns their file records. */
function receiveMultipart(
  req: Request,
  keyOf: (fileId: string) => string,
  jobId: string,
  objects: ObjectStore,
  setValidateOnly: (v: boolean) => void,
): Promise<FileRecord[]> {
  const body = req.stream!;
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: MAX_FILES_PER_JOB + 1, fileSize: MAX_FILE_BYTES + 1 } });
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
