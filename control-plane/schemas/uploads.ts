/** Bodies and answers of the upload routes (TypeBox: validation, types, OpenAPI). */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_FILE_BYTES, MAX_FILES_PER_JOB, UPLOAD_URL_SECONDS } from '../../objects/object-store.js';

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
