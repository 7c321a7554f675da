/**
 * The one table of API error codes and their HTTP statuses (decisions.md). Every error body is
 * `{error, message}` plus the fields a code's contract names.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  job_not_retryable: 400,
  unauthorized: 401,
  insufficient_role: 403,
  forbidden: 403,
  not_found: 404,
  dataset_not_found: 404,
  source_not_found: 404,
  job_not_found: 404,
  schedule_not_found: 404,
  connection_not_found: 404,
  session_not_found: 404,
  run_not_found: 404,
  document_not_found: 404,
  method_not_allowed: 405,
  source_in_use: 409,
  id_collision: 409,
  dataset_exists: 409,
  document_unavailable: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  not_implemented: 501,
  upstream_error: 502,
  dataset_not_ready: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  body(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.extra };
  }
}

/** Engine error codes (SableError) and what they mean to an API caller. */
const ENGINE_CODES: Record<string, ErrorCode> = {
  invalid_argument: 'invalid_request',
  dataset_exists: 'dataset_exists',
  dataset_closed: 'dataset_not_ready',
  engine_closed: 'dataset_not_ready',
  out_of_memory: 'internal',
};

/** Any thrown value as an ApiError (unknown failures are 500 with a generic message). */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && code in ENGINE_CODES) {
    return new ApiError(ENGINE_CODES[code], (e as Error).message);
  }
  return new ApiError('internal', 'internal error');
}
