/** Bodies of the dataset catalog's use-cases as schemas: validator, types and OpenAPI in one. */
import { Type, type Static } from '@sinclair/typebox';
import { METRICS } from '../../engine/index.js';
import { StringEnum } from '../../contract/json-schema.js';

/** Declared types are checked (and aliases normalised) by schema.ts. */
const SchemaField = Type.Object({ name: Type.String(), type: Type.String() });
const SchemaList = Type.Array(SchemaField);

/** The engine takes search and build knobs up to this (larger ones failed every later search). */
export const MAX_KNOB = 1_000_000;

export const TuningFields = {
  nlist: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_KNOB })),
  nprobe_min: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_KNOB })),
  nprobe_max: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_KNOB })),
};

export const CreateDataset = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256 }),
  dim: Type.Optional(Type.Integer({ minimum: 1, maximum: 65536 })),
  metric: Type.Optional(StringEnum(METRICS)),
  index_type: Type.Optional(StringEnum(['sable'] as const, { description: 'always sable at creation; POST /datasets/{id}/index changes it' })),
  embedding: Type.Optional(
    Type.Object({
      provider: Type.Optional(Type.String()),
      model: Type.Optional(Type.String()),
      secret_ref: Type.Optional(Type.String()),
      // The dataset's dimension when `dim` is absent: the engine's bound applies (past it the
      // record was accepted and its provisioning failed in the background, for ever).
      dim: Type.Optional(Type.Integer({ minimum: 1, maximum: 65536 })),
    }),
  ),
  hybrid: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  schema: Type.Optional(SchemaList),
  metadata_schema: Type.Optional(SchemaList),
  metadata_fields: Type.Optional(SchemaList),
  tuning: Type.Optional(Type.Object(TuningFields)),
});
export type CreateDataset = Static<typeof CreateDataset>;

export const PatchSchema = Type.Object({
  schema: Type.Optional(SchemaList),
  metadata_schema: Type.Optional(SchemaList),
  metadata_fields: Type.Optional(SchemaList),
  mode: Type.Optional(Type.String({ description: 'merge (default) or replace' })),
});
export type PatchSchema = Static<typeof PatchSchema>;
