/**
 * Calls to a source's API that a rate limit or a passing outage may refuse: retried after the
 * wait the answer asks for (Retry-After, x-ratelimit-reset), within a bound, then failed with the
 * answer in words.
 */
import { retryAfterMs } from '../../outbound/retry-after.js';

/** The shapes client libraries fail with (Octokit, axios, jira.js's HttpException with the axios error as its cause). */
export interface HttpFailure {
  status?: number;
  response?: { status?: number; headers?: Record<string, unknown>; data?: unknown };
  cause?: { response?: { headers?: Record<string, unknown> } };
  message?: string;
}

const MAX_WAIT_MS = 60_000;

export function statusOf(e: unknown): number | undefined {
  const f = e as HttpFailure;
  return f?.status ?? f?.response?.status;
}

/** The wait a 429 / 503 (or a 403 with an exhausted rate limit) asks for, or null when the failure is not one. */
export function retryWait(e: unknown, attempt: number): number | null {
  const f = e as HttpFailure;
  const status = statusOf(e);
  const h = (f?.response?.headers ?? f?.cause?.response?.headers ?? {}) as Record<string, string | undefined>;
  const limited = status === 429 || status === 503 || (status === 403 && (h['x-ratelimit-remaining'] === '0' || h['retry-after'] !== undefined));
  if (!limited) return null;
  const asked = retryAfterMs(h['retry-after']);
  if (asked !== null) return asked;
  if (h['x-ratelimit-reset'] !== undefined) return Math.max(0, Number(h['x-ratelimit-reset']) * 1000 - Date.now()) + 250;
  return 500 * 2 ** attempt;
}

export async function retrying<T>(fn: () => Promise<T>, signal?: AbortSignal, attempts = 4): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      const wait = retryWait(e, attempt);
      if (wait === null || attempt + 1 >= attempts || wait > MAX_WAIT_MS || signal?.aborted) throw e;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
