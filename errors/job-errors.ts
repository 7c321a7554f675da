/**
 * Why a job or one of its files failed: the `error_type` of a job file and the `type` of a job's
 * `error_details`, with what each means. A failure that is an error of the registry (codes.ts),
 * such as the dataset being deleted during a load, carries that code instead.
 */
import type { ErrorCode } from './codes.js';

export const FILE_ERROR_TYPES = {
  not_parquet: 'the bytes are not a Parquet file',
  corrupt_file: "the file's data cannot be decoded",
  vector_column_missing: 'no column is named values, embedding, vector, embeddings or vectors',
  vector_column_ambiguous: 'more than one vector column',
  vector_column_type: 'the vector column is not a list of float32 or float64',
  dimension_mismatch: "a vector's length differs from the dataset's dimension",
  non_finite_value: 'a vector holds NaN, an infinity or a null component',
  null_vector: 'a row has no vector',
  id_column_missing: 'no id column in a job of several files',
  id_column_ambiguous: 'more than one id column',
  id_column_type: 'the id column does not hold integers',
  invalid_id: 'an id is null or beyond 2^53',
  duplicate_id: "an id appears twice in the job's files",
  metadata_column_type: 'a metadata column is not scalar',
  upload_missing: 'no bytes were uploaded for the file, or they are no longer stored',
  upload_expired: 'the upload was never completed (upload/complete) before its URLs expired',
  size_mismatch: 'the uploaded bytes differ in size from what was declared',
  dataset_unavailable: "the job's dataset cannot be opened",
  unsupported_type: 'the file is not a format the parsers read (PDF, DOCX, XLSX, HTML, Markdown, CSV, text, source code)',
  encrypted: 'the file is password protected',
  empty_document: 'the file holds no text',
  file_too_large: "the file is over the source's size limit",
  zip_bomb: 'the archive would expand far past any real document',
  parse_failed: 'the parser failed on the file (or ran out of memory)',
  timed_out: "the file's processing ran past its time bound",
  source_unreachable: 'the source could not be read (its service failed or refused)',
} as const satisfies Record<string, string>;

export type FileErrorType = keyof typeof FILE_ERROR_TYPES | ErrorCode;

/** Reasons a whole job failed, beside the reason of its one failed file. */
export const JOB_ERROR_TYPES = {
  files_failed: 'several files failed (error_details.files lists them)',
  no_files: 'no file was confirmed for the job',
  timed_out: "the job ran past its kind's time bound",
  too_many_attempts: 'the job was started again and again without ending (each start died)',
} as const satisfies Record<string, string>;

export type JobErrorType = keyof typeof JOB_ERROR_TYPES | FileErrorType;

/** A typed failure of one file: the job records it and goes on with the next file. */
export class FileError extends Error {
  constructor(
    readonly type: FileErrorType,
    message: string,
    /** Vectors of the file loaded before it failed. */
    readonly inserted = 0,
  ) {
    super(message);
  }
}
