/** Request bodies of the dataset routes (validated with ajv; also the OpenAPI document). */
import { scalar, schemaField } from './common.js';

const schemaList = { type: 'array', items: schemaField } as const;

/** A JSON array of numbers, or (application/msgpack) a float32 binary. */
const floatVector = {
  anyOf: [{ type: 'array', items: { type: 'number' } }, { type: 'object', description: 'float32 binary (msgpack only)' }],
} as const;

export const createDataset = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    dim: { type: 'integer', minimum: 1, maximum: 65536 },
    metric: { enum: ['cosine', 'l2', 'ip'] },
    index_type: { enum: ['sable'] },
    embedding: {
      type: 'object',
      properties: { provider: { type: 'string' }, model: { type: 'string' }, secret_ref: { type: 'string' }, dim: { type: 'integer', minimum: 1 } },
    },
    hybrid: { type: 'boolean' },
    metadata: { type: 'object' },
    schema: schemaList,
    metadata_schema: schemaList,
    metadata_fields: schemaList,
    tuning: {
      type: 'object',
      properties: {
        nlist: { type: 'integer', minimum: 1 },
        nprobe_min: { type: 'integer', minimum: 1 },
        nprobe_max: { type: 'integer', minimum: 1 },
      },
    },
  },
} as const;

export const patchSchema = {
  type: 'object',
  properties: {
    schema: schemaList,
    metadata_schema: schemaList,
    metadata_fields: schemaList,
    mode: { type: 'string' },
  },
} as const;

/** `values`, or a `metadata.text` for the dataset's embedding model to turn into them. */
export const vector = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: ['string', 'integer'] },
    values: floatVector,
    metadata: { type: 'object', additionalProperties: scalar },
  },
  anyOf: [
    { required: ['values'] },
    { required: ['metadata'], properties: { metadata: { required: ['text'], properties: { text: { type: 'string', minLength: 1 } } } } },
  ],
} as const;

export const insertVectors = {
  type: 'object',
  required: ['vectors'],
  properties: { vectors: { type: 'array', items: vector } },
} as const;

export const deleteVectors = {
  type: 'object',
  required: ['ids'],
  properties: {
    ids: { type: 'array', items: { type: ['string', 'integer'] } },
    write_concern: { enum: ['default', 'one', 'quorum', 'all'] },
  },
} as const;

const advancedFilter = {
  type: 'object',
  required: ['field', 'op'],
  properties: {
    field: { type: 'string', minLength: 1 },
    op: { enum: ['eq', 'gt', 'gte', 'lt', 'lte', 'in'] },
    value: { type: ['string', 'number', 'boolean', 'null'] },
    values: { type: 'array', items: { type: ['string', 'number', 'boolean', 'null'] } },
  },
} as const;

export const search = {
  type: 'object',
  properties: {
    query: floatVector,
    query_text: { type: 'string' },
    embedding_model: { type: 'string' },
    embedding_provider: { type: 'string' },
    top_k: { type: 'integer', minimum: 1, maximum: 10000 },
    filters: { type: 'object', additionalProperties: scalar },
    advanced_filters: { type: 'array', items: advancedFilter },
    nprobe_override: { type: 'integer', minimum: 1 },
    rerank_depth_override: { type: 'integer', minimum: 0 },
    rerank: {},
    hybrid: { type: 'boolean' },
    sparse_query: { type: 'string' },
    alpha: { type: 'number', minimum: 0, maximum: 1 },
    include_embeddings: { type: 'boolean' },
    include_documents: { type: 'boolean' },
    include_metadata: { type: 'boolean' },
  },
} as const;

/** Texts per /embed call at most (a bigger load belongs in an ingestion job). */
export const MAX_EMBED_TEXTS = 2048;

export const embed = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    texts: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_EMBED_TEXTS },
  },
  oneOf: [{ required: ['text'] }, { required: ['texts'] }],
} as const;

export const promotionPolicy = {
  type: 'object',
  properties: {
    max_buffer_vectors: { type: 'integer', minimum: 1 },
    max_buffer_age_ms: { type: 'integer', minimum: 1 },
  },
} as const;

export const sla = {
  type: 'object',
  properties: {
    target_p99_us: { type: 'integer', minimum: 0 },
    min_nprobe: { type: 'integer', minimum: 1 },
    max_nprobe_fraction: { type: 'integer', minimum: 1, maximum: 100 },
    min_beam_width: { type: 'integer', minimum: 1 },
    max_beam_width: { type: 'integer', minimum: 1 },
  },
} as const;

export const indexType = {
  type: 'object',
  properties: { index_type: { enum: ['sable', 'hnsw', 'ivf', 'flat'] } },
} as const;

export const tuning = {
  type: 'object',
  properties: {
    nlist: { type: 'integer', minimum: 1 },
    nprobe_min: { type: 'integer', minimum: 1 },
    nprobe_max: { type: 'integer', minimum: 1 },
    m: { type: 'integer', minimum: 2, maximum: 1024 },
    ef_construction: { type: 'integer', minimum: 1 },
  },
} as const;

export const hybridEnabled = { type: 'object', required: ['enabled'], properties: { enabled: { type: 'boolean' } } } as const;
export const hybridAlpha = { type: 'object', required: ['alpha'], properties: { alpha: { type: 'number', minimum: 0, maximum: 1 } } } as const;
