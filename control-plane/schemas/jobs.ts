/**
 * Answers of the job routes (a job, its files, its statistics), also the answer of a schedule's
 * trigger. In control-plane, not contract/: the statuses they enumerate are jobs/records.ts's.
 */
import { Type } from '@sinclair/typebox';
import { Page, Timestamp } from '../../contract/common.js';
import { StringEnum } from '../../contract/json-schema.js';
import { FILE_STATUSES, JOB_STATUSES } from '../../jobs/records.js';

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
