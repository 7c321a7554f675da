/**
 * The bodies of the vector routes as schemas (TypeBox): one definition gives the request
 * validator (ajv, in the HTTP layer), the TypeScript types the use-cases take, and the OpenAPI
 * entries. The retrieval use-cases take these types whoever calls them (HTTP, an answer planner).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Scalar, StringEnum } from '../contract/json-schema.js';
import { FILTER_OPS, MAX_TOP_K } from '../engine/index.js';


/** A JSON array of numbers, or (application/msgpack) a float32 binary. */
const FloatVector = Type.Unsafe<number[] | Float32Array>({
  anyOf: [{ type: 'array', items: { type: 'number' } }, { type: 'object', description: 'float32 binary (msgpack only)' }],
});

const Metadata = Type.Record(Type.String(), Scalar, { description: 'scalar values only; nested objects and arrays are refused' });

/** `values`, or a `metadata.text` for the dataset's embedding model to turn into them. */
export const VectorIn = Type.Object(
  {
    id: Type.Union([Type.String(), Type.Integer()]),
    values: Type.Optional(FloatVector),
    metadata: Type.Optional(Metadata),
  },
  {
    // Each alternative says its type, so generated clients type an item as one of them (a bare
    // `required` list made them `unknown`).
    anyOf: [
      { type: 'object', required: ['values'], properties: { values: FloatVector } },
      { type: 'object', required: ['metadata'], properties: { metadata: { type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1 } } } } },
    ],
  },
);
export type VectorIn = Static<typeof VectorIn>;

export const InsertVectors = Type.Object({ vectors: Type.Array(VectorIn) });
export type InsertVectors = Static<typeof InsertVectors>;

export const DeleteVectors = Type.Object({
  ids: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  write_concern: Type.Optional(StringEnum(['default', 'one', 'quorum', 'all'] as const)),
});
export type DeleteVectors = Static<typeof DeleteVectors>;

export const AdvancedFilter = Type.Object({
  field: Type.String({ minLength: 1 }),
  op: StringEnum(FILTER_OPS),
  value: Type.Optional(Scalar),
  values: Type.Optional(Type.Array(Scalar)),
});

export const DEFAULT_MAX_DOCUMENTS = 100;
export const MAX_MAX_DOCUMENTS = 1000;

/** The model reranker: `true`, or options (an object without `enabled: false` turns it on). */
export const RerankRequest = Type.Union([
  Type.Boolean(),
  Type.Object({
    enabled: Type.Optional(Type.Boolean()),
    provider: Type.Optional(Type.String({ minLength: 1 })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    top_n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOP_K })),
    max_documents: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_MAX_DOCUMENTS })),
    fail_open: Type.Optional(Type.Boolean()),
  }),
]);
export type RerankRequest = Static<typeof RerankRequest>;

export const SearchRequest = Type.Object({
  query: Type.Optional(FloatVector),
  query_text: Type.Optional(Type.String()),
  embedding_model: Type.Optional(Type.String()),
  embedding_provider: Type.Optional(Type.String()),
  top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOP_K })),
  filters: Type.Optional(Type.Record(Type.String(), Scalar)),
  advanced_filters: Type.Optional(Type.Array(AdvancedFilter)),
  nprobe_override: Type.Optional(Type.Integer({ minimum: 1 })),
  rerank_depth_override: Type.Optional(Type.Integer({ minimum: 0 })),
  rerank: Type.Optional(RerankRequest),
  hybrid: Type.Optional(Type.Boolean()),
  sparse_query: Type.Optional(Type.String()),
  alpha: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  include_embeddings: Type.Optional(Type.Boolean()),
  include_documents: Type.Optional(Type.Boolean()),
  include_metadata: Type.Optional(Type.Boolean()),
});
export type SearchRequest = Static<typeof SearchRequest>;

/** Texts per /embed call at most (a bigger load belongs in an ingestion job). */
export const MAX_EMBED_TEXTS = 2048;

export const EmbedRequest = Type.Object(
  {
    text: Type.Optional(Type.String()),
    texts: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: MAX_EMBED_TEXTS })),
  },
  { oneOf: [{ required: ['text'] }, { required: ['texts'] }] },
);
export type EmbedRequest = Static<typeof EmbedRequest>;

// ------------------------------------------------------------------ responses (OpenAPI)

const Receipt = Type.Object(
  {
    strategy: Type.String({ description: 'exact, index, widened, mixed or none' }),
    candidates_scored: Type.Integer(),
    partitions_searched: Type.Integer(),
    isa: Type.String(),
    partitions: Type.Array(Type.Object({}, { additionalProperties: true })),
    estimated_recall: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description: "expected recall@10 of this search from the index's build-time calibration, rows-weighted over the partitions searched (1 for exact scans); null when a partition's index has no estimate (hnsw)",
    }),
    elapsed_us: Type.Integer(),
  },
  { description: 'How the engine searched.' },
);

export const SearchResult = Type.Object({
  id: Type.Integer(),
  score: Type.Number({ description: 'ascending: cosine 1 - similarity, l2 squared distance, ip negated dot product' }),
  external_id: Type.Optional(Type.String({ description: 'the string id the vector was inserted with' })),
  metadata: Type.Optional(Type.Record(Type.String(), Scalar)),
  embedding: Type.Optional(Type.Array(Type.Number())),
  doc_kind: Type.Union([StringEnum(['inline', 'url'] as const), Type.Null()]),
  doc_value: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  dense_score: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  keyword_score: Type.Optional(Type.Number()),
  dense_contribution: Type.Optional(Type.Number()),
  keyword_contribution: Type.Optional(Type.Number()),
  rerank_score: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
});

export const SearchResponse = Type.Object({
  results: Type.Array(SearchResult),
  query_time_ms: Type.Number(),
  receipt: Type.Union([Receipt, Type.Null()]),
  rerank: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'rerank status: requested, applied, provider, model, reason, latency_ms, documents' })),
});

export const InsertResponse = Type.Object({ inserted: Type.Integer(), embedded: Type.Integer() });
export const DeleteResponse = Type.Object({ deleted: Type.Integer({ description: 'ids that existed' }) });
export const PayloadResponse = Type.Object({ id: Type.Integer(), external_id: Type.Optional(Type.String()), metadata: Type.Record(Type.String(), Scalar) });
export const EmbedResponse = Type.Object({
  embeddings: Type.Array(Type.Array(Type.Number())),
  provider: Type.String(),
  model: Type.String(),
  dim: Type.Integer(),
});

