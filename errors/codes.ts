/**
 * The one registry of failure codes. Every error any layer raises carries one of these codes
 * (the native core's included: a test checks its list against this one), with what it means.
 * HTTP statuses are not here: only control-plane/http maps a code to a status and to the code
 * the API shows.
 */
export const ERROR_CODES = {
  // Requests the API refuses.
  invalid_request: 'the request is malformed or breaks a rule of the API',
  unauthorized: 'no valid API key or session token was sent',
  insufficient_role: 'the key lacks the role the operation needs',
  forbidden: 'a self-authenticating URL was refused (expired, altered, wrong content type or size)',
  not_found: 'no such route or resource',
  method_not_allowed: 'the route exists but not for this method',
  payload_too_large: 'the body is over the limit',
  unsupported_media_type: 'the body has a content type the route does not take',
  // Resources.
  dataset_not_found: 'no such dataset in the organization',
  job_not_found: 'no such job in the organization',
  source_not_found: 'no such source in the organization',
  schedule_not_found: 'no such schedule in the organization',
  document_not_found: 'no such document in the dataset',
  connection_not_found: 'no such connection in the organization',
  session_not_found: 'no such intelligence session in the organization',
  run_not_found: 'no such run in the organization (runs are kept 15 minutes)',
  run_conflict: 'a run of that id exists for another question',
  rate_limited: 'too many requests of the organization at once; retry shortly',
  dataset_exists: 'a dataset of that name exists (names are unique in an organization, and in an engine)',
  id_collision: 'two string ids map to one integer id in a dataset',
  job_not_retryable: 'only failed or cancelled jobs can be retried',
  source_in_use: 'the source is attached to an enabled schedule or an in-flight job',
  schedule_busy: "a run of the schedule is in flight (a schedule runs once at a time)",
  document_unavailable: "the document's original bytes are not kept or cannot be fetched",
  dataset_not_ready: 'the dataset is being provisioned; retry shortly',
  vecstack_router_failed: 'the cluster cannot serve the request now (too few replicas in sync, a shard unreachable, the cluster database away); retry the same request',
  dataset_closed: 'the engine dataset was closed (the service is stopping or the dataset was deleted)',
  engine_closed: 'the engine was closed (the service is stopping)',
  // Outside services.
  upstream_error: 'an outside provider (embeddings, reranker, source) failed',
  // The engine and its native core.
  invalid_argument: 'an engine call got an argument it cannot take',
  snapshot_corrupt: 'an index snapshot is truncated, foreign or altered (it is rebuilt from LMDB)',
  snapshot_missing: 'an index snapshot file is missing (it is rebuilt from LMDB)',
  segment_not_found: 'a segment handle is not open (released by compaction or close)',
  segment_sealed: 'rows were appended to a sealed segment',
  index_building: 'an index build is already running on the segment',
  io_error: 'a file could not be written',
  unsupported: 'the machine lacks what the call needs (an instruction set)',
  model_invalid: 'embedding model weights or configuration are malformed',
  model_not_found: 'an embedding model handle is not open',
  out_of_memory: 'the engine ran out of memory',
  // Ours.
  invalid_configuration: 'a flag, an environment variable or a key file of the service is invalid',
  internal: 'a bug or an unexpected failure',
  not_implemented: 'the feature is not built yet',
} as const satisfies Record<string, string>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

export interface ErrorDetails {
  /** Fields the contract names beside `error` and `message` (e.g. `references` of source_in_use). */
  fields?: Record<string, unknown>;
  /** Seconds after which a retry may succeed (a Retry-After header over HTTP). */
  retryAfterSeconds?: number;
  /** Methods a route takes (an Allow header over HTTP). */
  allow?: string[];
}

/**
 * The one error class of the service: a code of the registry, a message for the caller, and the
 * details the contract names. The native core raises it too (the engine hands it to the addon).
 */
export class SableError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'SableError';
  }
}

export function invalid(message: string): SableError {
  return new SableError('invalid_argument', message);
}

/** A setting of the service that cannot be used (the CLI exits 2 with the message). */
export function configError(message: string): SableError {
  return new SableError('invalid_configuration', message);
}

/** A request the API refuses (400). */
export function badRequest(message: string): SableError {
  return new SableError('invalid_request', message);
}
