/**
 * One JSON POST to an outside service with a timeout per attempt and retries with exponential
 * backoff (and the service's Retry-After when it sends one) on 429, 5xx and network failures.
 * Other 4xx fail at once: a bad key or model does not improve with retrying. Messages name the
 * service (`label`, e.g. "openai embeddings") and never carry the API key.
 */
import { networkCause, providerMessage, redact } from './messages.js';
import { retryAfterMs } from './retry-after.js';

export interface RetryPolicy {
  timeoutMs: number;
  /** Attempts after the first. */
  retries: number;
  /** First backoff; doubles per retry (with jitter), capped at 30 s. */
  backoffMs: number;
}

export type OutboundReason = 'timeout' | 'rate_limited' | 'upstream_error' | 'unreachable' | 'cancelled';

/** A failed call to an outside service, classified; the message is safe to show. */
export class OutboundError extends Error {
  constructor(
    readonly reason: OutboundReason,
    message: string,
    readonly status?: number,
    /** The service's Retry-After header, when it sent one with a 429 or 5xx. */
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

export async function postJson(
  label: string,
  url: string,
  body: unknown,
  apiKey: string | undefined,
  policy: RetryPolicy,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<unknown> {
  const h: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json', ...headers };
  if (apiKey) h.Authorization = `Bearer ${apiKey}`;
  const payload = JSON.stringify(body);
  let last: OutboundError | null = null;
  for (let attempt = 0; attempt <= policy.retries; attempt++) {
    if (attempt > 0) await sleep(backoff(policy, attempt, last), label, signal);
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    const signals = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let status: number;
    let text: string;
    let retryAfter: string | null = null;
    try {
      const res = await fetch(url, { method: 'POST', headers: h, body: payload, signal: signals });
      status = res.status;
      retryAfter = res.headers.get('retry-after');
      text = await res.text();
    } catch (e) {
      if (signal?.aborted) throw new OutboundError('cancelled', `${label} request was cancelled`);
      last = timeout.aborted
        ? new OutboundError('timeout', `${label} timed out after ${policy.timeoutMs} ms`)
        : new OutboundError('unreachable', redact(`${label} endpoint unreachable: ${networkCause(e)}`, apiKey));
      continue;
    }
    if (status >= 200 && status <= 299) {
      try {
        return JSON.parse(text);
      } catch {
        throw new OutboundError('upstream_error', `${label} returned a body that is not JSON`);
      }
    }
    // Redacted before providerMessage clips it: a key cut in two would no longer match.
    const detail = providerMessage(redact(text, apiKey));
    const message = redact(`${label} returned HTTP ${status}${detail ? `: ${detail}` : ''}`, apiKey);
    last = new OutboundError(status === 429 ? 'rate_limited' : 'upstream_error', message, status, retryAfter ?? undefined);
    if (status !== 429 && status < 500) throw last;
  }
  const tries = policy.retries + 1;
  throw new OutboundError(last!.reason, `${last!.message} (after ${tries} attempt${tries === 1 ? '' : 's'})`, last!.status, last!.retryAfter);
}

function backoff(policy: RetryPolicy, attempt: number, last: OutboundError | null): number {
  const asked = retryAfterMs(last?.retryAfter);
  if (asked !== null) return Math.min(30_000, asked);
  const base = policy.backoffMs * 2 ** (attempt - 1);
  return Math.min(30_000, base / 2 + Math.random() * (base / 2));
}

function sleep(ms: number, label: string, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new OutboundError('cancelled', `${label} request was cancelled`));
    }, { once: true });
  });
}
