/**
 * Bodies and answers of the dataset routes (TypeBox: the validator, the handler's type and the
 * OpenAPI entry in one definition). The vector routes' bodies live with their use-cases in
 * retrieval/requests.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { INDEX_TYPES, METRICS } from '../../engine/index.js';
import { MAX_KNOB, TuningFields } from '../../catalog/datasets/requests.js';
import { StringEnum } from '../../contract/json-schema.js';
import { Page, Timestamp } from '../../contract/common.js';

export { CreateDataset, PatchSchema } from '../../catalog/datasets/requests.js';

export const PromotionPolicy = Type.Object({
  max_buffer_vectors: Type.Optional(Type.Integer({ minimum: 1 })),
  max_buffer_age_ms: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const Sla = Type.Object({
  target_p99_us: Type.Optional(Type.Integer({ minimum: 0 })),
  min_nprobe: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_KNOB })),
  max_nprobe_fraction: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  min_beam_width: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_KNOB })),
  max_beam_width: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_KNOB })),
});

export const IndexTypeBody = Type.Object({ index_type: Type.Optional(StringEnum(INDEX_TYPES)) });

export const Tuning = Type.Object({
  ...TuningFields,
  m: Type.Optional(Type.Integer({ minimum: 2, maximum: 1024 })),
  ef_construction: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_KNOB })),
});
export type Tuning = Static<typeof Tuning>;

export const HybridEnabled = Type.Object({ enabled: Type.Boolean() });
export const HybridAlpha = Type.Object({ alpha: Type.Number({ minimum: 0, maximum: 1 }) });

// ------------------------------------------------------------------ answers

const SchemaEntry = Type.Object({
  name: Type.String(),
  type: Type.String(),
  source: StringEnum(['user', 'inferred'] as const),
  confidence: Type.Optional(Type.Number()),
  samples: Type.Optional(Type.Integer()),
});

export const Dataset = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  org_id: Type.String(),
  dim: Type.Integer(),
  metric: StringEnum(METRICS),
  tuning: Type.Object(
    {
      nlist: Type.Integer({ minimum: 0, description: 'lists of the largest built index, else round(4 * sqrt(vectors)) for the vectors held; 0 before the first vector and for hnsw and flat' }),
      nprobe_min: Type.Integer({ minimum: 1, description: 'least lists a search the engine tunes probes; the SLA min_nprobe (1) until set' }),
      nprobe_max: Type.Integer({ minimum: 1, description: 'most lists a search the engine tunes probes; nlist x the SLA max_nprobe_fraction (50 %) until set' }),
    },
    {
      description:
        'The values in effect. Until set through POST /datasets/{id}/defaults/tuning (or at creation) they follow the data: ' +
        'each is recomputed as vectors arrive and indexes are built. nprobe_min and nprobe_max bound the nprobe the engine picks ' +
        '(its calibrated default or the SLA tuner); a search\'s own nprobe_override is used as given.',
    },
  ),
  embedding: Type.Object({ provider: Type.String(), model: Type.String(), secret_ref: Type.Optional(Type.String()) }),
  index_type: StringEnum(INDEX_TYPES),
  hybrid: Type.Boolean(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  status: StringEnum(['ready', 'provisioning'] as const, { description: 'provisioning: writes and searches answer 503 dataset_not_ready' }),
  schema: Type.Optional(Type.Array(SchemaEntry, { description: 'omitted when the dataset has no schema' })),
  schema_version: Type.Optional(Type.Integer()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const DatasetList = Type.Object({ datasets: Type.Array(Dataset), ...Page });

export const Stats = Type.Object({
  vector_count: Type.Integer(),
  deleted_count: Type.Integer(),
  storage_bytes: Type.Integer(),
  memory_bytes: Type.Integer(),
  index_type: StringEnum(INDEX_TYPES),
  index_status: StringEnum(['empty', 'building', 'ready'] as const),
  partitions: Type.Integer(),
  dim: Type.Integer(),
  metric: StringEnum(METRICS),
});

export const IndexStatus = Type.Object({
  index_type: StringEnum(INDEX_TYPES),
  status: StringEnum(['empty', 'building', 'ready'] as const),
  progress: Type.Number({ minimum: 0, maximum: 100 }),
  partitions: Type.Integer(),
  built_at: Type.Union([Timestamp, Type.Null()]),
});

export const SchemaAnswer = Type.Object({ schema: Type.Array(SchemaEntry), schema_version: Type.Integer() });
export const HybridAnswer = Type.Object({ enabled: Type.Boolean(), alpha: Type.Number() });
export const PromotionAnswer = Type.Object({ max_buffer_vectors: Type.Integer(), max_buffer_age_ms: Type.Integer() });
export const SlaAnswer = Type.Object({
  target_p99_us: Type.Integer(),
  min_nprobe: Type.Integer(),
  max_nprobe_fraction: Type.Integer(),
  min_beam_width: Type.Integer(),
  max_beam_width: Type.Integer(),
  observed_p99_us: Type.Union([Type.Number(), Type.Null()]),
  current_nprobe: Type.Union([Type.Integer(), Type.Null()]),
  current_beam_width: Type.Union([Type.Integer(), Type.Null()]),
});
