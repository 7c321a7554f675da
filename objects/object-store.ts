/**
 * Where uploaded bytes live: a directory under the data directory (URLs signed by the service)
 * or S3-compatible object storage (real S3 presigned URLs). Jobs read them through `stage`.
 */
import type { Readable } from 'node:stream';

export interface UploadTarget {
  key: string;
  contentType: string;
  sizeBytes: number;
  jobId: string;
  fileId: string;
  /** Unix seconds. */
  expiresAt: number;
}

export type ByteLimit = { exact: number } | { max: number };

export class SizeMismatch extends Error {
  constructor(readonly received: number, readonly limit: ByteLimit) {
    super(
      'exact' in limit
        ? received > limit.exact
          ? `the body is larger than the ${limit.exact} bytes declared`
          : `the body has ${received} bytes; ${limit.exact} were declared`
        : `the body exceeds ${limit.max} bytes`,
    );
  }
}

export interface StagedFile {
  /** A local file holding the object's bytes. */
  path: string;
  release(): Promise<void>;
}

export interface ObjectStore {
  readonly kind: 'local' | 's3';
  /** The URL the caller PUTs the bytes to, with no API key. `uploadBase`: where the service takes uploads. */
  presignPut(target: UploadTarget, uploadBase: string): string;
  /** Stores a stream (uploads through the service); resolves with its byte count. Rejects with
   * SizeMismatch, storing nothing, when the stream is not exactly `size.exact` bytes or exceeds
   * `size.max`. */
  put(key: string, stream: Readable, size: ByteLimit, contentType: string): Promise<number>;
  /**
   * Stores a file already on local disk (`size` bytes) without copying it to a spool first:
   * object storage takes one PUT for a small file and a multipart upload, retried part by part,
   * for a large one (S3 caps one PUT at 5 GiB). The caller keeps, and deletes, its file; it must
   * not change while this runs (the local store may hard-link it). Rejects with SizeMismatch,
   * storing nothing, when the file is not `size` bytes.
   */
  putFile(key: string, path: string, size: number, contentType: string): Promise<void>;
  /** Size of a stored object, or null when there is none. */
  size(key: string): Promise<number | null>;
  stage(key: string): Promise<StagedFile>;
  remove(key: string): Promise<void>;
  /**
   * How a caller gets an object's bytes back: a short-lived signed URL to redirect to (object
   * storage), or the bytes streamed by the service (local store). Null when it is gone.
   */
  download(key: string, expiresSeconds: number, as?: { name: string; contentType: string }): Promise<{ redirect: string } | { stream: Readable; size: number } | null>;
}

/**
 * The Content-Disposition of a downloaded original: its name quoted when it is plain ASCII, else
 * in RFC 5987 form. The quoted form has no character that URI encoders disagree on (!'()*), so
 * it survives a presigned URL's response-content-disposition on any S3-compatible store.
 */
export function attachmentDisposition(name: string): string {
  return /^[\x20-\x7e]*$/.test(name) && !/["\\!'()*]/.test(name) ? `attachment; filename="${name}"` : `attachment; filename*=UTF-8''${encodeURIComponent(name).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** The limits of the contract for Parquet uploads. */
export const MAX_FILE_BYTES = 5 * 1024 ** 3;
export const MAX_FILES_PER_JOB = 1000;
export const UPLOAD_URL_SECONDS = 3600;
