// The in-process side: the same dataset built with the embedded engine in the benchmark's own
// process, its searchBatch throughput (the comparison the HTTP figures are divided by), and the
// diagnosis measurements that need no HTTP: the off-thread hop (the service's ShardPool),
// metadata reads per hit, and the per-request costs of the service's parse/validate/encode steps.
import { performance } from 'node:perf_hooks';
import { Ajv } from 'ajv';
import { hashKey } from '../../control-plane/auth/keys.js';
import { decodeMsgpack, encodeMsgpack } from '../../control-plane/http/msgpack.js';
import { SearchRequest } from '../../retrieval/requests.js';
import { Engine, type Dataset, type ShardPool } from '../../engine/index.js';
import { searchBody } from './bodies.js';
import { machineTimes, threadTimes } from './procstat.js';
import { mean, percentiles } from './stats.js';

export interface Built {
  engine: Engine;
  ds: Dataset;
  upsertSeconds: number;
  flushSeconds: number;
  partitions: number;
  vectors: number;
  isa: string;
}

/** Promotion policy of both sides while loading: one growing partition, sealed once at the end. */
export const LOAD_POLICY = { max_buffer_vectors: 200_000, max_buffer_age_ms: 3_600_000 };

export async function buildInProcess(base: Float32Array, n: number, dim: number, batch: number): Promise<Built> {
  const engine = await Engine.open({});
  const ds = await engine.createDataset({ name: 'bench-http', dim, metric: 'cosine', promotion: LOAD_POLICY });
  const t0 = performance.now();
  for (let first = 0; first < n; first += batch) {
    const count = Math.min(batch, n - first);
    const ids = Array.from({ length: count }, (_, i) => first + i);
    // A copy, as the service makes from the request body.
    await ds.upsert(ids, base.slice(first * dim, (first + count) * dim));
  }
  const t1 = performance.now();
  await ds.flush();
  const t2 = performance.now();
  const s = ds.stats();
  return { engine, ds, upsertSeconds: (t1 - t0) / 1000, flushSeconds: (t2 - t1) / 1000, partitions: s.partitions, vectors: s.vector_count, isa: engine.isa };
}

export interface BatchResult {
  label: string;
  threads: number;
  includeMetadata: boolean;
  qps: number;
  passes: number;
  seconds: number;
  /** CPU of this process over the window, in cores. */
  cores: number;
  /** CPU the rest of the machine used meanwhile, in cores. */
  otherCores: number;
}

/** searchBatch over all queries, repeated: a warm-up, then passes until `durationMs` is reached. */
export async function measureBatch(
  label: string,
  ds: Dataset,
  queries: Float32Array,
  opts: { topK: number; threads: number; includeMetadata: boolean; warmupMs: number; durationMs: number },
): Promise<BatchResult> {
  const nq = queries.length / ds.dim;
  const run = () => ds.searchBatch(queries, { topK: opts.topK, threads: opts.threads, includeMetadata: opts.includeMetadata });
  const w0 = performance.now();
  do await run();
  while (performance.now() - w0 < opts.warmupMs);
  const m0 = machineTimes();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let passes = 0;
  do {
    await run();
    passes++;
  } while (performance.now() - t0 < opts.durationMs);
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const m1 = machineTimes();
  const cores = (c.user + c.system) / 1e6 / seconds;
  return {
    label,
    threads: opts.threads,
    includeMetadata: opts.includeMetadata,
    qps: (passes * nq) / seconds,
    passes,
    seconds,
    cores,
    otherCores: Math.max(0, (m1.busy - m0.busy) / seconds - cores),
  };
}

/** Top-k ids of the first `count` queries, in-process (to check the service holds the same data). */
export async function topIds(ds: Dataset, queries: Float32Array, count: number, topK: number): Promise<number[][]> {
  const hits = await ds.searchBatch(queries.subarray(0, count * ds.dim), { topK, threads: 1, includeMetadata: false });
  return hits.map((h) => h.map((x) => x.id));
}

export interface PoolResult {
  label: string;
  concurrency: number;
  qps: number;
  p50: number;
  p99: number;
  /** CPU of this process over the window, in cores; of its main thread, and the kernel part of that. */
  cores: number;
  mainCores: number;
  mainSysCores: number;
  otherCores: number;
}

/**
 * A closed loop inside this process: `concurrency` callers, each awaiting `one(i)` again and again;
 * a warm-up, then a window timed by the callers themselves (no timers, so synchronous work works
 * too). CPU from getrusage (the process) and /proc (its main thread).
 */
export async function closedLoop(
  label: string,
  concurrency: number,
  opts: { warmupMs: number; durationMs: number },
  one: (i: number) => Promise<unknown> | unknown,
): Promise<PoolResult> {
  const lat: number[] = [];
  const tw = performance.now() + opts.warmupMs;
  const te = tw + opts.durationMs;
  let started = false;
  let c0 = process.cpuUsage();
  let m0 = machineTimes();
  let th0 = threadTimes(process.pid);
  let t0 = 0;
  let t1 = 0;
  const caller = async (slot: number) => {
    let i = slot * 7919;
    for (;;) {
      const s = performance.now();
      if (s >= te) {
        if (!t1) t1 = s;
        return;
      }
      if (s >= tw && !started) {
        started = true;
        t0 = s;
        c0 = process.cpuUsage();
        m0 = machineTimes();
        th0 = threadTimes(process.pid);
      }
      await one(i++);
      if (started && s >= t0) lat.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => caller(i)));
  const seconds = (t1 - t0) / 1000;
  const c = process.cpuUsage(c0);
  const m1 = machineTimes();
  const th1 = threadTimes(process.pid);
  const main0 = th0.threads.get(process.pid);
  const main1 = th1.threads.get(process.pid);
  const cores = (c.user + c.system) / 1e6 / seconds;
  const [p50, p99] = percentiles(Float64Array.from(lat), [0.5, 0.99]);
  return {
    label,
    concurrency,
    qps: lat.length / seconds,
    p50: p50!,
    p99: p99!,
    cores,
    mainCores: main0 && main1 ? (main1.seconds - main0.seconds) / seconds : NaN,
    mainSysCores: main0 && main1 ? (main1.sys - main0.sys) / seconds : NaN,
    otherCores: Math.max(0, (m1.busy - m0.busy) / seconds - cores),
  };
}

/** The service's search path without HTTP: the engine's search on the service's ShardPool. */
export function poolSearch(ds: Dataset, pool: ShardPool, queries: Float32Array, topK: number): (i: number) => Promise<unknown> {
  const nq = queries.length / ds.dim;
  const qs = Array.from({ length: nq }, (_, i) => queries.slice(i * ds.dim, (i + 1) * ds.dim));
  return (i) => ds.searchDetailed(Float32Array.from(qs[i % nq]!), { topK, includeMetadata: true }, pool);
}

/** Dataset.searchDetailed on this thread (no hop), metadata included. */
export function inlineSearch(ds: Dataset, queries: Float32Array, topK: number): (i: number) => Promise<unknown> {
  const nq = queries.length / ds.dim;
  const qs = Array.from({ length: nq }, (_, i) => queries.slice(i * ds.dim, (i + 1) * ds.dim));
  return (i) => ds.searchDetailed(qs[i % nq]!, { topK, includeMetadata: true });
}

export interface StepCost {
  step: string;
  /** Microseconds per request, one thread. */
  us: number;
  note: string;
}

/** CPU µs per call of `fn` (this thread is the process's only busy one while it runs). */
function timeIt(fn: (i: number) => unknown, minMs = 300): number {
  for (let i = 0; i < 200; i++) fn(i);
  let ops = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  do {
    for (let i = 0; i < 100; i++) fn(ops++);
  } while (performance.now() - t0 < minMs);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / ops;
}

/**
 * Microseconds per request of the steps the service's main thread runs for one search, measured
 * here on the service's own compiled modules (ajv with the route's schema, the msgpack decoder,
 * the key hash) over the benchmark's bodies, and one real response of the service re-encoded.
 */
export function stepCosts(queries: Float32Array, dim: number, topK: number, apiKey: string, sampleResponse: unknown): StepCost[] {
  const nq = queries.length / dim;
  const bodies = {
    json: Array.from({ length: nq }, (_, i) => searchBody('json', queries.subarray(i * dim, (i + 1) * dim), topK)),
    msgpack: Array.from({ length: nq }, (_, i) => searchBody('msgpack', queries.subarray(i * dim, (i + 1) * dim), topK)),
  };
  // The same queries printed with 9 significant digits (enough to round-trip a float32).
  const short = Array.from({ length: nq }, (_, i) =>
    Buffer.from(JSON.stringify({ query: Array.from(queries.subarray(i * dim, (i + 1) * dim), (v) => Number(v.toPrecision(9))), top_k: topK })),
  );
  const ajv = new Ajv({ allErrors: false, strict: false });
  const validate = ajv.compile(SearchRequest);
  const parsedJson = bodies.json.map((b) => JSON.parse(b.toString('utf8')) as { query: number[] });
  const parsedPack = bodies.msgpack.map((b) => decodeMsgpack(b) as { query: Float32Array });
  let sink = 0;
  const out: StepCost[] = [
    { step: 'JSON.parse of the search body', us: timeIt((i) => (sink += (JSON.parse(bodies.json[i % nq]!.toString('utf8')) as { top_k: number }).top_k)), note: `${Math.round(mean(bodies.json.map((b) => b.length)))} B body, 768 numbers` },
    { step: 'JSON.parse, floats printed with 9 digits', us: timeIt((i) => (sink += (JSON.parse(short[i % nq]!.toString('utf8')) as { top_k: number }).top_k)), note: `${Math.round(mean(short.map((b) => b.length)))} B body: what a client writing float32-exact shortest decimals would send` },
    { step: 'ajv validate (JSON body)', us: timeIt((i) => (sink += validate(parsedJson[i % nq]) ? 1 : 0)), note: 'the route schema: each of 768 items checked as a number' },
    { step: 'Float32Array.from(query) (JSON)', us: timeIt((i) => (sink += Float32Array.from(parsedJson[i % nq]!.query).length)), note: 'vectors.ts, before the pool' },
    { step: 'decodeMsgpack of the search body', us: timeIt((i) => (sink += (decodeMsgpack(bodies.msgpack[i % nq]!) as { top_k: number }).top_k)), note: `${Math.round(mean(bodies.msgpack.map((b) => b.length)))} B body, float32 binary` },
    { step: 'ajv validate (msgpack body)', us: timeIt((i) => (sink += validate(parsedPack[i % nq]) ? 1 : 0)), note: 'query is a Float32Array: the array branch fails, the object branch passes' },
    { step: 'Float32Array.from(query) (msgpack)', us: timeIt((i) => (sink += Float32Array.from(parsedPack[i % nq]!.query).length)), note: 'a copy of an existing Float32Array' },
    { step: 'hashKey(x-api-key)', us: timeIt(() => (sink += hashKey(apiKey).length)), note: 'per request, before the LMDB key lookup' },
    { step: 'JSON.stringify of the response', us: timeIt(() => (sink += JSON.stringify(sampleResponse).length)), note: `${JSON.stringify(sampleResponse).length} B, top_k ${topK}` },
    { step: 'encodeMsgpack of the response', us: timeIt(() => (sink += encodeMsgpack(sampleResponse).length)), note: `${encodeMsgpack(sampleResponse).length} B` },
  ];
  if (sink === -1) console.log(sink);
  return out;
}
