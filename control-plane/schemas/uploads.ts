/** Bodies and answers of the bulk-upload and job routes (TypeBox: validation, types, OpenAPI). */
import { Type, type Static } from '@sinclair/typebox';
import { FILE_STATUSES, JOB_STATUSES } from '../../jobs/records.js';
import { StringEnum } from '../../contract/json-schema.js';
import { MAX_FILE_BYTES, MAX_FILES_PER_JOB, UPLOAD_URL_SECONDS } from '../../objects/object-store.js';
import { Page, Timestamp } from '../../contract/common.js';

export const UploadInit = Type.Object(
  {
    files: Type.Array(
      Type.Object({
        name: Type.String({ minLength: 1, maxLength: 1024 }),
        size_bytes: Type.Integer({ minimum: 1, maximum: MAX_FILE_BYTES }),
        content_type: Type.String({ minLength: 1, maxLength: 255 }),
      }),
      { minItems: 1, maxItems: MAX_FILES_PER_JOB },
    ),
    validate_only: Type.Optional(Type.Boolean({ description: 'Check schema, dimension and ids of the files without loading them.' })),
    idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A repeated init with the same key returns the same job (fresh URLs).' })),
  },
  { additionalProperties: false },
);
export type UploadInit = Static<typeof UploadInit>;

// Ids are looked up as LMDB keys (1978 bytes at most: a longer one threw, a 500); the service's are uuids.
export const UploadComplete = Type.Object({
  job_id: Type.String({ minLength: 1, maxLength: 128 }),
  file_ids: Type.Array(Type.String({ maxLength: 128 }), { maxItems: MAX_FILES_PER_JOB }),
});
export type UploadComplete = Static<typeof UploadComplete>;

/** The multipart body of POST /v1/datasets/{id}/upload (streamed, described for OpenAPI). */
export const multipartUpload = {
  'multipart/form-data': {
    type: 'object',
    required: ['files'],
    properties: {
      validate_only: { type: 'string', enum: ['true', 'false'], description: 'Sent before the files.' },
      files: { type: 'array', items: { type: 'string', format: 'binary' }, maxItems: MAX_FILES_PER_JOB },
    },
  },
};

/** The raw bytes PUT to a local presigned URL. */
export const rawUpload = { '*/*': { type: 'string', format: 'binary', description: 'Exactly size_bytes bytes, with the Content-Type given at init.' } };

// ------------------------------------------------------------------ answers

export const UploadInitAnswer = Type.Object({
  job_id: Type.String({ format: 'uuid' }),
  uploads: Type.Array(Type.Object({ file_id: Type.String({ format: 'uuid' }), upload_url: Type.String(), expires_in: Type.Literal(UPLOAD_URL_SECONDS) })),
});
export const UploadCompleteAnswer = Type.Object({ confirmed: Type.Integer({ description: 'listed files whose bytes arrived with the declared size' }) });
export const MultipartAnswer = Type.Object({ job_id: Type.String({ format: 'uuid' }), files_received: Type.Integer(), status_url: Type.String() });
export const PutAnswer = Type.Object({ file_id: Type.String(), size_bytes: Type.Integer() });

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const Job = Type.Object({
  job_id: Type.String({ format: 'uuid' }),
  status: StringEnum(JOB_STATUSES),
  message: Type.String(),
  documents_processed: Type.Integer(),
  vectors_inserted: Type.Integer(),
  processing_time_seconds: Type.Number(),
  started_at: Timestamp,
  completed_at: Nullable(Timestamp),
  progress_percentage: Type.Number({ minimum: 0, maximum: 100 }),
  current_step: Nullable(Type.String()),
  error_details: Type.Union([
    Type.Object({
      type: Type.String(),
      message: Type.String(),
      files: Type.Optional(Type.Array(Type.Object({ file_id: Type.String(), file_name: Type.String(), error_type: Type.String(), error_message: Type.String() }))),
    }),
    Type.Null(),
  ]),
  dataset_id: Type.String(),
  source_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  validate_only: Type.Boolean(),
  retry_of: Nullable(Type.String()),
});

export const JobFile = Type.Object({
  uuid: Type.String(),
  file_name: Type.String(),
  file_path: Type.String(),
  file_size_bytes: Type.Integer(),
  content_type: Type.String(),
  status: StringEnum(FILE_STATUSES),
  status_reason: Nullable(Type.String()),
  error_type: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
  chunks_created: Type.Integer(),
  embeddings_generated: Type.Integer(),
  vectors_inserted: Type.Integer(),
  processing_duration_ms: Type.Integer(),
  retry_count: Type.Integer(),
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  created_at: Timestamp,
  job_uuid: Type.String(),
});

export const JobList = Type.Object({ jobs: Type.Array(Job), ...Page });
export const JobFiles = Type.Object({ files: Type.Array(JobFile), ...Page, counts: Type.Record(Type.String(), Type.Integer()) });
export const JobStatistics = Type.Union([
  Type.Object({
    total_files_discovered: Type.Integer(),
    files_processed: Type.Integer(),
    files_skipped: Type.Integer(),
    files_failed: Type.Integer(),
    total_bytes_processed: Type.Integer(),
    total_chunks_created: Type.Integer(),
    total_embeddings_generated: Type.Integer(),
    total_vectors_inserted: Type.Integer(),
    avg_processing_time_ms: Type.Integer(),
    total_processing_time_ms: Type.Integer(),
    error_breakdown: Type.Record(Type.String(), Type.Integer()),
    file_type_breakdown: Type.Record(Type.String(), Type.Integer()),
  }),
  Type.Null(),
]);
