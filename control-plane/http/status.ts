/**
 * The one place a failure code becomes an HTTP answer: its status, the code the API shows (a few
 * engine codes mean what a contract code says: a bad argument is `invalid_request`, a closed or
 * released dataset is `dataset_not_ready`), and the headers its details ask for. Every code of
 * the registry has a deliberate entry here; the type makes a missing one a compile error.
 */
import { randomUUID } from 'node:crypto';
import { ERROR_CODES, isErrorCode, SableError, type ErrorCode } from '../../errors/codes.js';
import { json, type Response } from './types.js';

interface Answer {
  status: number;
  /** The code the body shows, when it differs from the raised one. */
  shown?: ErrorCode;
  /** Retry-After seconds when the error does not carry its own. */
  retryAfter?: number;
}

export const ERROR_ANSWERS: Record<ErrorCode, Answer> = {
  invalid_request: { status: 400 },
  unauthorized: { status: 401 },
  insufficient_role: { status: 403 },
  forbidden: { status: 403 },
  not_found: { status: 404 },
  method_not_allowed: { status: 405 },
  payload_too_large: { status: 413 },
  unsupported_media_type: { status: 415 },
  dataset_not_found: { status: 404 },
  job_not_found: { status: 404 },
  source_not_found: { status: 404 },
  schedule_not_found: { status: 404 },
  document_not_found: { status: 404 },
  connection_not_found: { status: 404 },
  session_not_found: { status: 404 },
  run_not_found: { status: 404 },
  run_conflict: { status: 409 },
  rate_limited: { status: 429, retryAfter: 1 },
  dataset_exists: { status: 409 },
  id_collision: { status: 409 },
  job_not_retryable: { status: 400 },
  source_in_use: { status: 409 },
  schedule_busy: { status: 409 },
  document_unavailable: { status: 410 },
  dataset_not_ready: { status: 503, retryAfter: 1 },
  vecstack_router_failed: { status: 503, retryAfter: 1 },
  // The dataset is going away or the service is stopping: retryable, as provisioning is.
  dataset_closed: { status: 503, shown: 'dataset_not_ready', retryAfter: 1 },
  engine_closed: { status: 503, shown: 'dataset_not_ready', retryAfter: 1 },
  // A search that held a segment a compaction released: the next search sees the new partitions.
  segment_not_found: { status: 503, shown: 'dataset_not_ready', retryAfter: 1 },
  upstream_error: { status: 502 },
  invalid_argument: { status: 400, shown: 'invalid_request' },
  // Server-side faults, reported with their own code so an operator can tell them apart.
  snapshot_corrupt: { status: 500 },
  snapshot_missing: { status: 500 },
  segment_sealed: { status: 500 },
  index_building: { status: 500 },
  io_error: { status: 500 },
  unsupported: { status: 500 },
  model_invalid: { status: 500 },
  model_not_found: { status: 500 },
  invalid_configuration: { status: 500 },
  out_of_memory: { status: 503, retryAfter: 5 },
  internal: { status: 500 },
  not_implemented: { status: 501 },
};

/**
 * Any thrown value as an HTTP answer; failures that are not SableErrors are 500 `internal`. A
 * server-side failure names the request id, which the log line of its cause carries too.
 */
export function errorResponse(e: unknown, requestId?: string): Response {
  const err = e instanceof SableError ? e : isErrorCode((e as { code?: unknown })?.code) ? new SableError((e as SableError).code, (e as Error).message) : null;
  const quote = requestId === undefined ? {} : { request_id: requestId };
  const tell = requestId === undefined ? '' : ` (request ${requestId}: quote it to the operator, whose log has the cause)`;
  if (!err || err.code === 'internal') return json(500, { error: 'internal', message: `internal error${tell}`, ...quote });
  const answer = ERROR_ANSWERS[err.code];
  const headers: Record<string, string> = {};
  const retryAfter = err.details.retryAfterSeconds ?? answer.retryAfter;
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  if (err.details.allow) headers.allow = err.details.allow.join(', ');
  if (answer.status === 500) return json(answer.status, { error: answer.shown ?? err.code, message: err.message + tell, ...err.details.fields, ...quote }, headers);
  return json(answer.status, { error: answer.shown ?? err.code, message: err.message, ...err.details.fields }, headers);
}

/** Codes with their statuses, for the OpenAPI document. */
export function errorTable(): { code: ErrorCode; status: number; meaning: string }[] {
  return (Object.keys(ERROR_CODES) as ErrorCode[])
    .filter((code) => ERROR_ANSWERS[code].shown === undefined)
    .map((code) => ({ code, status: ERROR_ANSWERS[code].status, meaning: ERROR_CODES[code] }));
}

/**
 * What a failure outside the router becomes (an adapter's callback threw, a handler rejected, an
 * answer could not be written): its error's answer, and a bug's 500 is logged with its stack.
 */
export function failedRequest(e: unknown): Response {
  const requestId = randomUUID();
  const out = errorResponse(e, requestId);
  if (out.status === 500) console.error(`sable: a request failed in the HTTP layer: request ${requestId}:`, e);
  return { ...out, headers: { ...out.headers, 'x-request-id': requestId } };
}
