/**
 * Bulk upload of Parquet vectors (the contract's legacy-prefixed paths): presigned init, the
 * local store's PUT target (for a file_upload source's files too), complete, and the one-step
 * multipart upload.
 */
import type { BulkUploads } from '../../bulk/uploads.js';
import type { UploadJobs } from '../../jobs/uploads.js';
import { route, type Route } from '../http/router.js';
import { json, type Request } from '../http/types.js';
import * as S from '../schemas/uploads.js';

export interface UploadDeps {
  bulk: BulkUploads;
  uploads: UploadJobs;
  /** Base of the URLs the local store signs, for this request (the upload listener). */
  uploadBase: (req: Request) => string;
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
      handler: async ({ req, caller, params, body }) => json(200, await d.bulk.init(caller.orgId, params.datasetId, body, d.uploadBase(req))),
    }),
    route({
      method: 'POST', path: '/datasets/:datasetId/upload/complete', auth: 'key', summary: 'Confirm uploaded files and start the load job',
      body: S.UploadComplete, responses: { 200: S.UploadCompleteAnswer },
      description:
        'Returns {confirmed}: the listed files whose bytes arrived with the declared size. A listed file without ' +
        'its bytes fails (error_type upload_missing or size_mismatch); files not listed are skipped. Calling it ' +
        'again answers the same count. Poll the job at /v1/jobs/{job_id}.',
      handler: async ({ caller, params, body }) => json(200, await d.bulk.complete(caller.orgId, params.datasetId, body.job_id, body.file_ids)),
    }),
    {
      method: 'POST', path: '/datasets/:datasetId/upload', auth: 'key', summary: 'Upload Parquet files in one multipart request and load them',
      stream: true, responses: { 202: S.MultipartAnswer },
      streamContent: S.multipartUpload,
      description:
        'multipart/form-data with one or more `files` parts (each a Parquet file with its content type); an optional ' +
        'field `validate_only` (true/false) before the files. Bytes stream to storage (5 GB per file, 1000 files). ' +
        'Answers 202 {job_id, files_received, status_url}; status_url is /v1/jobs/{job_id}.',
      handler: async ({ req, caller, params }) => json(202, await d.bulk.receive(caller.orgId, params.datasetId, { headers: req.headers, stream: req.stream! })),
    },
  ];
  if (d.uploads.takesPuts) {
    routes.push({
      method: 'PUT', path: '/uploads/:token', auth: 'none', summary: 'The presigned upload URL of the local store (raw bytes)',
      stream: true, responses: { 200: S.PutAnswer },
      streamContent: S.rawUpload,
      description:
        'Self-authenticating: no API key. The Content-Type must equal the one given at init and the body must be ' +
        'exactly size_bytes bytes; otherwise, or after the hour, 403 forbidden. Answers {file_id, size_bytes}.',
      handler: async ({ req, params }) => {
        const put = { stream: req.stream!, contentType: req.headers['content-type'], contentLength: req.headers['content-length'], signal: req.signal };
        return json(200, await d.uploads.receivePut(params.token, put));
      },
    });
  }
  return routes;
}
