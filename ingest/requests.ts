/**
 * The bodies of the ingestion use-cases (sources, uploads to a source, jobs, schedules) and their
 * answers, as TypeBox schemas: the validator, the types the services take, the OpenAPI entries.
 * A new source's `config` is checked by its type's schema (sources/types.ts), picked by its type.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../contract/json-schema.js';
import { MAX_FILES_PER_JOB } from '../objects/object-store.js';
import { DOCUMENT_STATUSES } from '../catalog/documents/store.js';
import { SOURCE_CONFIGS, SOURCE_TYPES } from './sources/types.js';

const Metadata = Type.Record(Type.String(), Type.Unknown());
const Id = Type.String({ minLength: 1, maxLength: 128 });

/**
 * A source of one of the nine types: `source_type` picks the alternative, and with it the schema
 * of `config` (so a generated client types each config, and a refusal names the config's field).
 */
export const SourceCreate = Type.Union(
  SOURCE_TYPES.map((t) =>
    Type.Object(
      {
        source_type: Type.Literal(t),
        name: Type.String({ minLength: 1, maxLength: 256 }),
        config: SOURCE_CONFIGS[t],
        description: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
        metadata: Type.Optional(Metadata),
      },
      { additionalProperties: false },
    ),
  ),
);
export type SourceCreate = Static<typeof SourceCreate>;

export const SourceValidate = Type.Object({ source_type: StringEnum(SOURCE_TYPES), config: Type.Record(Type.String(), Type.Unknown()) });
export type SourceValidate = Static<typeof SourceValidate>;

export const SourcePatch = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
  config: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'the whole config; a secret sent as ******** keeps its stored value' })),
  metadata: Type.Optional(Metadata),
});
export type SourcePatch = Static<typeof SourcePatch>;

export const SourceUploadInit = Type.Object({
  dataset_id: Id,
  files: Type.Array(
    Type.Object({
      name: Type.String({ minLength: 1, maxLength: 1024 }),
      size_bytes: Type.Integer({ minimum: 1, maximum: 5 * 1024 ** 3 }),
      content_type: Type.String({ minLength: 1, maxLength: 255 }),
    }),
    { minItems: 1, maxItems: MAX_FILES_PER_JOB },
  ),
});
export type SourceUploadInit = Static<typeof SourceUploadInit>;

export const JobCreate = Type.Object({
  source_id: Id,
  dataset_id: Id,
  pipeline_id: Type.Optional(Type.Union([Id, Type.Null()], { description: 'the processing pipeline (the organization default when omitted)' })),
});
export type JobCreate = Static<typeof JobCreate>;

const Cron = Type.String({ minLength: 1, maxLength: 128, description: 'a cron expression (5 fields, or 6 with seconds)' });
const TimeZone = Type.String({ minLength: 1, maxLength: 64, description: 'an IANA time zone, e.g. Europe/Paris' });

export const ScheduleCreate = Type.Object({
  source_id: Id,
  dataset_id: Id,
  cron: Cron,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  pipeline_id: Type.Optional(Type.Union([Id, Type.Null()])),
  timezone: Type.Optional(TimeZone),
  enabled: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(Metadata),
  resume_state: Type.Optional(Metadata),
});
export type ScheduleCreate = Static<typeof ScheduleCreate>;

// Closed: a field a patch cannot change (org_id, source_id, dataset_id) is refused, not ignored.
export const SchedulePatch = Type.Object(
  {
    cron: Type.Optional(Cron),
    timezone: Type.Optional(TimeZone),
    enabled: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    metadata: Type.Optional(Metadata),
    resume_state: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type SchedulePatch = Static<typeof SchedulePatch>;

// ------------------------------------------------------------------ answers

const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const Source = Type.Object({
  id: Type.String({ format: 'uuid' }),
  org_id: Type.String(),
  type: StringEnum(SOURCE_TYPES),
  name: Type.String(),
  description: Nullable(Type.String()),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'secret fields are ********' }),
  metadata: Metadata,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const SourceList = Type.Object({ sources: Type.Array(Source), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
export const References = Type.Object({
  schedules: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
  schedule_count: Type.Integer(),
  active_job_count: Type.Integer(),
  in_use: Type.Boolean(),
});
export const Cleanup = Type.Object({ deleted: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), type: Type.String() })), count: Type.Integer() });
export const Validation = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  normalized_config: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'every default filled in; secrets ********' }),
  samples: Type.Array(Type.Object({ title: Type.String(), url: Type.Union([Type.String(), Type.Null()]) })),
  warnings: Type.Array(Type.String()),
});
export const SourceTypes = Type.Object({
  source_types: Type.Array(Type.Object({ type: StringEnum(SOURCE_TYPES), name: Type.String(), supports_auth: Type.Boolean() })),
});
export const SourceUploadInitAnswer = Type.Object({
  job_id: Type.String({ format: 'uuid' }),
  uploads: Type.Array(Type.Object({ file_id: Type.String({ format: 'uuid' }), upload_url: Type.String(), expires_in: Type.Integer() })),
});
export const SourceUploadCompleteAnswer = Type.Object({ confirmed: Type.Integer(), job_id: Type.String({ format: 'uuid' }) });

export const Schedule = Type.Object({
  id: Type.String({ format: 'uuid' }),
  org_id: Type.String(),
  source_id: Type.String(),
  dataset_id: Type.String(),
  pipeline_id: Nullable(Type.String()),
  name: Type.String(),
  cron: Type.String(),
  timezone: Type.String(),
  enabled: Type.Boolean(),
  next_run_at: Nullable(Timestamp),
  last_run_at: Nullable(Timestamp),
  resume_state: Metadata,
  metadata: Metadata,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const ScheduleList = Type.Object({ schedules: Type.Array(Schedule), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });

export const Document = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  path: Type.String(),
  url: Nullable(Type.String()),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  status: StringEnum(DOCUMENT_STATUSES),
  download_available: Type.Boolean(),
  title: Nullable(Type.String()),
  format: Nullable(Type.String()),
  source_id: Nullable(Type.String()),
  source_type: Nullable(Type.String()),
  chunk_count: Type.Integer(),
  tokens: Type.Integer(),
  pages: Type.Union([Type.Integer(), Type.Null()]),
  error_type: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
  job_id: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const DocumentList = Type.Object({ documents: Type.Array(Document), next_cursor: Nullable(Type.String()) });
