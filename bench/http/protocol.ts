// Messages between the orchestrator (run.ts) and its children (loadgen.ts, server.ts,
// bare-uws.ts, bare-node.ts), over the fork IPC channel with `serialization: 'advanced'` (typed
// arrays pass as themselves).
import type { ClientKind, Format } from './config.js';

export interface LoadSpec {
  host: string;
  port: number;
  /** search: POST the dataset's search route; bare-get / bare-post: a bare server's /hello route. */
  target: 'search' | 'bare-get' | 'bare-post';
  /** The body encoding (search, bare-post). */
  format: Format;
  path: string;
  apiKey?: string;
  topK: number;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  maxRequests: number;
  client: ClientKind;
  /** Every sampleEvery-th measured response is decoded and checked (0: none). */
  sampleEvery: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** Responses with another status than 200 (counted in `errors` too). */
  non200: number;
  firstError?: string;
  seconds: number;
  rps: number;
  /** Latency percentiles in ms, from every measured request's own timing. */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  /** CPU of the load generator process over the window, in cores (1 = one core busy). */
  clientCores: number;
  /** The kernel (system) part of clientCores. */
  clientSysCores: number;
  requestBytes: number;
  responseBytes: number;
  /** Of the sampled responses: server-reported handler time and pool search time (ms), means. */
  sampled: number;
  serverQueryMs: number | null;
  poolElapsedMs: number | null;
  /** Sampled responses whose result count differed from top_k. */
  badResults: number;
}

export interface InsertSpec {
  host: string;
  port: number;
  path: string;
  apiKey: string;
  file: string;
  n: number;
  dim: number;
  batch: number;
  concurrency: number;
}

export interface InsertResult {
  vectors: number;
  requests: number;
  seconds: number;
  bodyBytes: number;
  /** Per-request latency (ms). */
  p50: number;
  p99: number;
  clientCores: number;
}

export type ToLoadgen =
  | { type: 'setup'; queries: Float32Array; dim: number }
  | { type: 'load'; id: number; spec: LoadSpec }
  | { type: 'insert'; id: number; spec: InsertSpec }
  | { type: 'exit' };

export type FromLoadgen =
  | { type: 'phase'; id: number; phase: 'measure-start' | 'measure-end' }
  | { type: 'load-result'; id: number; result: LoadResult }
  | { type: 'insert-result'; id: number; result: InsertResult }
  | { type: 'error'; id: number; message: string };

export interface Usage {
  /** process.cpuUsage() (µs, all threads). */
  cpu: NodeJS.CpuUsage;
  /** performance.eventLoopUtilization() of the main thread. */
  elu: { idle: number; active: number; utilization: number };
}

export type ToServer = { type: 'usage' } | { type: 'close' };
export type FromServer =
  /** adapter: the HTTP stack serving; detail: which build of it (the uWS binary, or why node:http). */
  | { type: 'ready'; url: string; port: number; adapter: string; detail: string }
  | { type: 'usage'; usage: Usage }
  | { type: 'closed' }
  | { type: 'failed'; message: string };
