/** The HTTP shapes every adapter speaks; routes never see uWebSockets.js or node:http. */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';

export interface Request {
  method: string; // upper case
  path: string;
  query: URLSearchParams;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Buffer;
  /** The body as a stream with backpressure, on routes that stream it (then `body` is empty). */
  stream?: Readable;
  /** Microsecond clock at arrival, for metrics. */
  startedAt: bigint;
  /** Aborts when the client goes away before the answer is complete (long work stops with it). */
  signal?: AbortSignal;
}

export interface Response {
  status: number;
  headers?: Record<string, string>;
  /** A Readable is sent as it comes (chunked), with backpressure; it is destroyed if the client goes. */
  body?: Buffer | string | Readable;
}

export type Handler = (req: Request) => Promise<Response>;

export interface HttpServer {
  /** Which adapter serves: 'uWebSockets.js' or 'node:http'. */
  readonly adapter: string;
  /** Why this adapter: the uWS binary loaded (package, file), or why none did. */
  readonly detail: string;
  /** Resolves with the bound port (useful with port 0). */
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Largest buffered body; streamed bodies are limited by their route. */
  maxBodyBytes: number;
  /** Whether the route of a request reads its body as a stream (uploads of up to gigabytes). */
  streams?: (method: string, path: string) => boolean;
}

/** What an adapter answers when the body is over the limit: the route never runs. */
export function tooLarge(limit: number): Response {
  return json(413, { error: 'payload_too_large', message: `the request body exceeds ${limit} bytes` }, { 'x-request-id': randomUUID() });
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): Response {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(value) };
}

export const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found', 304: 'Not Modified',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  409: 'Conflict', 410: 'Gone', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests',
  500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable',
};
