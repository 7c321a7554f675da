/**
 * GETs (and HEADs) of web pages and files for sources that crawl: redirects followed by hand so
 * every hop passes the private-address guard (a literal address before connecting, a name in its
 * DNS lookup), bodies bounded in bytes, 429 and 503 retried after their Retry-After, and one
 * error type that says what went wrong in words.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkLiteralHost, guardedLookup } from './address-guard.js';
import { retryAfterMs } from './retry-after.js';

export interface WebRequestOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
  allowPrivate: boolean;
  timeoutMs?: number;
  maxRedirects?: number;
  /** Retries of 429 / 503 (waiting Retry-After, at most maxRetryWaitMs). */
  retries?: number;
  maxRetryWaitMs?: number;
}

export class WebError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export const USER_AGENT = 'SableBot/0.1 (+https://github.com/sable-retrieval)';

/** The answer after redirects: its final URL, status, headers and body stream (not consumed). */
export async function open(method: 'GET' | 'HEAD', url: string, o: WebRequestOptions): Promise<{ url: URL; res: IncomingMessage }> {
  let current = new URL(url);
  for (let hop = 0, retry = 0; ; ) {
    const res = await once(method, current, o);
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (++hop > (o.maxRedirects ?? 5)) throw new WebError(`${url}: more than ${o.maxRedirects ?? 5} redirects`, status);
      current = new URL(res.headers.location, current);
      if (current.protocol !== 'http:' && current.protocol !== 'https:') throw new WebError(`${url} redirects to ${current.protocol} (not followed)`, status);
      continue;
    }
    if ((status === 429 || status === 503) && retry < (o.retries ?? 2)) {
      res.resume();
      retry++;
      await sleep(Math.min(o.maxRetryWaitMs ?? 10_000, retryAfterMs(res.headers['retry-after']) ?? 500 * 2 ** retry), o.signal);
      continue;
    }
    return { url: current, res };
  }
}

/** A whole body, refused past `maxBytes`. */
export async function readBody(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of res) {
    size += (c as Buffer).length;
    if (size > maxBytes) {
      res.destroy();
      throw new WebError(`the answer is over ${maxBytes} bytes`, res.statusCode ?? null);
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

function once(method: string, url: URL, o: WebRequestOptions): Promise<IncomingMessage> {
  checkLiteralHost(url, o.allowPrivate);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers: { 'user-agent': USER_AGENT, accept: '*/*', ...o.headers }, timeout: o.timeoutMs ?? 30_000, signal: o.signal, lookup: guardedLookup(o.allowPrivate) },
      resolve,
    );
    req.on('timeout', () => req.destroy(new WebError(`${url.href} did not answer in time`, null)));
    req.on('error', reject);
    req.end();
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}
