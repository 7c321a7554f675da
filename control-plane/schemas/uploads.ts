/** Request bodies of the bulk-upload routes (validated with ajv; also the OpenAPI document). */
import { MAX_FILE_BYTES, MAX_FILES_PER_JOB } from '../uploads/object-store.js';

export const uploadInit = {
  type: 'object',
  required: ['files'],
  additionalProperties: false,
  properties: {
    files: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_FILES_PER_JOB,
      items: {
        type: 'object',
        required: ['name', 'size_bytes', 'content_type'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 1024 },
          size_bytes: { type: 'integer', minimum: 1, maximum: MAX_FILE_BYTES },
          content_type: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
    },
    validate_only: { type: 'boolean', description: 'Check schema, dimension and ids of the files without loading them.' },
    idempotency_key: { type: 'string', minLength: 1, maxLength: 255, description: 'A repeated init with the same key returns the same job (fresh URLs).' },
  },
} as const;

export const uploadComplete = {
  type: 'object',
  required: ['job_id', 'file_ids'],
  properties: {
    job_id: { type: 'string', minLength: 1 },
    file_ids: { type: 'array', items: { type: 'string' }, maxItems: MAX_FILES_PER_JOB },
  },
} as const;

/** The multipart body of POST /v1/datasets/{id}/upload (streamed, described for OpenAPI). */
export const multipartUpload = {
  'multipart/form-data': {
    type: 'object',
    required: ['files'],
    properties: {
      validate_only: { type: 'string', enum: ['true', 'false'], description: 'Sent before the files.' },
      files: { type: 'array', items: { type: 'string', format: 'binary' }, maxItems: 1000 },
    },
  },
};

/** The raw bytes PUT to a local presigned URL. */
export const rawUpload = { '*/*': { type: 'string', format: 'binary', description: 'Exactly size_bytes bytes, with the Content-Type given at init.' } };
