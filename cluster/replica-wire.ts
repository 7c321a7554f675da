/**
 * The internal API between the nodes of a cluster: what a router sends a replica's node and
 * what it answers (`control-plane/routes/internal.ts` serves it, `replica-client.ts` calls it).
 * One TypeBox definition per body gives the route's validator and the client's types. Vectors
 * travel as JSON arrays of numbers: a float32 printed as a double reads back the same float32.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Scalar, StringEnum } from '../contract/json-schema.js';
import { FILTER_OPS, MAX_TOP_K } from '../engine/index.js';

/** The header every internal call carries: the cluster's shared secret. */
export const CLUSTER_SECRET_HEADER = 'x-sable-cluster-secret';

export const SyncBody = Type.Object({
  seq: Type.Integer({ minimum: 0 }),
  timeout_ms: Type.Integer({ minimum: 1, maximum: 600_000 }),
});
export type SyncBody = Static<typeof SyncBody>;

export const SyncAnswer = Type.Object({
  applied: Type.Integer(),
  /** What applying `seq` did: rows written, or ids a delete found (null: no longer remembered). */
  result: Type.Union([Type.Integer(), Type.Null()]),
});
export type SyncAnswer = Static<typeof SyncAnswer>;

const Metadata = Type.Record(Type.String(), Scalar);

export const ReplicaSearchBody = Type.Object({
  min_seq: Type.Integer({ minimum: 0 }),
  wait_ms: Type.Integer({ minimum: 0, maximum: 60_000 }),
  query: Type.Union([Type.Array(Type.Number()), Type.Null()]),
  keyword: Type.Optional(Type.Object({ text: Type.String(), alpha: Type.Number() })),
  top_k: Type.Integer({ minimum: 1, maximum: MAX_TOP_K }),
  nprobe: Type.Optional(Type.Integer({ minimum: 1 })),
  rerank_depth: Type.Optional(Type.Integer({ minimum: 0 })),
  filters: Type.Optional(Metadata),
  advanced_filters: Type.Optional(
    Type.Array(
      Type.Object({
        field: Type.String({ minLength: 1 }),
        op: StringEnum(FILTER_OPS),
        value: Type.Optional(Scalar),
        values: Type.Optional(Type.Array(Scalar)),
      }),
    ),
  ),
  include_metadata: Type.Boolean(),
  include_vectors: Type.Boolean(),
});
export type ReplicaSearchBody = Static<typeof ReplicaSearchBody>;

export const ReplicaHit = Type.Object({
  id: Type.Number(),
  score: Type.Number(),
  metadata: Type.Optional(Metadata),
  vector: Type.Optional(Type.Array(Type.Number())),
  dense_score: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  keyword_score: Type.Optional(Type.Number()),
  dense_contribution: Type.Optional(Type.Number()),
  keyword_contribution: Type.Optional(Type.Number()),
});
export type ReplicaHit = Static<typeof ReplicaHit>;

/** How the replica's engine searched (engine/types.ts Receipt), passed through as it is. */
const ReplicaReceipt = Type.Object({
  strategy: Type.String(),
  candidates_scored: Type.Number(),
  partitions_searched: Type.Number(),
  isa: Type.String(),
  partitions: Type.Array(
    Type.Object({
      strategy: Type.String(),
      rows: Type.Number(),
      matches: Type.Number(),
      candidates_scored: Type.Number(),
      nprobe: Type.Number(),
      beam_width: Type.Number(),
      estimated_recall: Type.Union([Type.Number(), Type.Null()]),
    }),
  ),
  estimated_recall: Type.Union([Type.Number(), Type.Null()]),
  elapsed_us: Type.Number(),
});

export const ReplicaSearchAnswer = Type.Object({ hits: Type.Array(ReplicaHit), applied: Type.Integer(), receipt: Type.Union([ReplicaReceipt, Type.Null()]) });
export type ReplicaSearchAnswer = Static<typeof ReplicaSearchAnswer>;

export const PointBody = Type.Object({
  min_seq: Type.Integer({ minimum: 0 }),
  wait_ms: Type.Integer({ minimum: 0, maximum: 60_000 }),
  id: Type.Number(),
  with_vector: Type.Boolean(),
});
export type PointBody = Static<typeof PointBody>;

export const PointAnswer = Type.Object({
  found: Type.Boolean(),
  metadata: Type.Optional(Metadata),
  vector: Type.Optional(Type.Array(Type.Number())),
});
export type PointAnswer = Static<typeof PointAnswer>;

export const AdminBody = Type.Object({
  op: StringEnum(['stats', 'rebuild', 'settings', 'tuning'] as const),
  /** settings: the caller's catalog seq, which the replica's node applies before it reads the record. */
  catalog_seq: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type AdminBody = Static<typeof AdminBody>;

/** The answer tools' reads of a replica's rows (retrieval/rows.ts), once it applied `min_seq`. */
export const RowsBody = Type.Object({
  min_seq: Type.Integer({ minimum: 0 }),
  wait_ms: Type.Integer({ minimum: 0, maximum: 60_000 }),
  op: StringEnum(['describe', 'admits', 'matching', 'metadata'] as const),
  max_values: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  ids: Type.Optional(Type.Array(Type.Number())),
  filters: Type.Optional(Metadata),
  advanced_filters: Type.Optional(ReplicaSearchBody.properties.advanced_filters),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
});
export type RowsBody = Static<typeof RowsBody>;
export type RowsQuery = Omit<RowsBody, 'min_seq' | 'wait_ms'>;

/** describe: DatasetColumns; admits: 0/1 per id; matching: ids and truncated; metadata: one object (or null) per id. */
export type RowsAnswer =
  | { columnTypes: Record<string, string>; values: Record<string, string[] | null>; vectorCount: number }
  | { admits: number[] }
  | { ids: number[]; truncated: boolean }
  | { metadata: (Record<string, unknown> | null)[] };
