// `sable serve` as a child process with everything it writes kept (stdout and stderr, whole),
// and an HTTP client that keeps every answer it gets (status, headers, body), so a test can
// search all the service said for what it must never say.
import { serve, type Served } from './serve.js';

export type RecordedService = Served;

/** `sable serve` with `args`, everything it writes kept whole (the one launcher, support/serve.ts). */
export function serveRecorded(args: string[], env: Record<string, string>): Promise<RecordedService> {
  return serve(null, env, { args });
}

export interface Exchange {
  method: string;
  url: string;
  status: number;
  headers: string;
  body: string;
  /** Secrets this answer exists to hand out (the token of POST /auth/sessions). */
  issues: string[];
}

export interface CallOptions {
  key?: string;
  bearer?: string;
  body?: unknown;
  /** A body sent as is (multipart, raw bytes, broken JSON). */
  raw?: BodyInit;
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
  /** Its entry in the transcript. */
  exchange: Exchange;
}

/** Calls that keep their answers in `transcript`. */
export function recorder(base: () => string) {
  const transcript: Exchange[] = [];
  const call = async (method: string, path: string, o: CallOptions = {}): Promise<Answer> => {
    const url = path.startsWith('http') ? path : base() + path;
    const headers: Record<string, string> = { ...(o.key ? { 'x-api-key': o.key } : {}), ...(o.bearer ? { authorization: `Bearer ${o.bearer}` } : {}), ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers };
    const res = await fetch(url, { method, headers, redirect: 'manual', body: o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body)) });
    const text = await res.text();
    const exchange: Exchange = { method, url, status: res.status, headers: [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n'), body: text, issues: [] };
    transcript.push(exchange);
    let body: any = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body, exchange };
  };
  return { call, transcript };
}
