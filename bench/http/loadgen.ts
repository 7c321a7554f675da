// The load generator: a forked child of run.ts, so it never shares an event loop with the
// service. Closed loop: each of `concurrency` connections sends its next request as soon as the
// previous answer is complete. A run is a warm-up, then a fixed measuring window; only requests
// started inside the window and answered before its end count. Every counted request has its
// own latency (process.hrtime.bigint); percentiles come from those.
import { readFileSync } from 'node:fs';
import { MSGPACK, packr, searchBody } from './bodies.js';
import { openConns, prepare, type Conn, type Prepared } from './client.js';
import type { Format } from './config.js';
import type { FromLoadgen, InsertResult, InsertSpec, LoadResult, LoadSpec, ToLoadgen } from './protocol.js';
import { mean, percentiles } from './stats.js';

let queries: Float32Array = new Float32Array(0);
let dim = 0;

function send(m: FromLoadgen): void {
  process.send!(m);
}

function requestsOf(spec: LoadSpec): Prepared[] {
  const nq = queries.length / dim;
  if (spec.target === 'bare-get') return [prepare(spec.host, spec.port, 'GET', spec.path, {}, null)];
  const headers: Record<string, string> =
    spec.format === 'json' ? { 'content-type': 'application/json' } : { 'content-type': MSGPACK, accept: MSGPACK };
  if (spec.apiKey) headers['x-api-key'] = spec.apiKey;
  const out: Prepared[] = [];
  for (let i = 0; i < nq; i++) {
    const body = searchBody(spec.format, queries.subarray(i * dim, (i + 1) * dim), spec.topK);
    out.push(prepare(spec.host, spec.port, 'POST', spec.path, headers, body));
  }
  return out;
}

interface Sample {
  queryMs: number;
  poolMs: number;
  results: number;
}

function decode(format: Format, body: Buffer): Sample {
  const v = (format === 'json' ? JSON.parse(body.toString('utf8')) : packr.unpack(body)) as {
    results?: unknown[];
    query_time_ms?: number;
    receipt?: { elapsed_us?: number };
  };
  return { queryMs: v.query_time_ms ?? NaN, poolMs: (v.receipt?.elapsed_us ?? NaN) / 1000, results: v.results?.length ?? -1 };
}

async function runLoad(id: number, spec: LoadSpec): Promise<LoadResult> {
  const reqs = requestsOf(spec);
  const { conns, close } = await openConns(spec.client, spec.host, spec.port, spec.concurrency);
  const lat = new Float64Array(spec.maxRequests);
  const samples: Sample[] = [];
  let count = 0;
  let sentMeasured = 0;
  let errors = 0;
  let non200 = 0;
  let firstError: string | undefined;
  let responseBytes = 0;
  let phase: 'warmup' | 'measure' | 'stop' = 'warmup';
  let t0 = 0n;
  let t1 = 0n;
  let cpu0 = process.cpuUsage();
  let cpuCores = 0;
  let cpuSysCores = 0;
  let inflight = 0;
  let finish: () => void = () => undefined;
  const drained = new Promise<void>((r) => (finish = r));

  const startMeasure = () => {
    if (phase !== 'warmup') return;
    phase = 'measure';
    t0 = process.hrtime.bigint();
    cpu0 = process.cpuUsage();
    send({ type: 'phase', id, phase: 'measure-start' });
    endTimer = setTimeout(stopMeasure, spec.durationMs);
  };
  const stopMeasure = () => {
    if (phase !== 'measure') return;
    t1 = process.hrtime.bigint();
    const c = process.cpuUsage(cpu0);
    cpuCores = (c.user + c.system) / (Number(t1 - t0) / 1000);
    cpuSysCores = c.system / (Number(t1 - t0) / 1000);
    phase = 'stop';
    if (endTimer) clearTimeout(endTimer);
    send({ type: 'phase', id, phase: 'measure-end' });
    if (inflight === 0) finish();
  };
  let endTimer: NodeJS.Timeout | undefined;

  const loop = (conn: Conn, slot: number) => {
    // Each connection walks the queries from its own offset.
    let qi = Math.floor((slot * reqs.length) / spec.concurrency);
    const next = () => {
      if (phase === 'stop') {
        inflight--;
        if (inflight === 0) finish();
        return;
      }
      const req = reqs[qi++ % reqs.length]!;
      const counted = phase === 'measure';
      const wantBody = counted && spec.sampleEvery > 0 && sentMeasured++ % spec.sampleEvery === 0;
      const start = process.hrtime.bigint();
      conn.send(req, wantBody, (err, status, body) => {
        const end = process.hrtime.bigint();
        if (err || status !== 200) {
          errors++;
          if (status !== 200 && !err) non200++;
          firstError ??= err ? err.message : `status ${status}${body ? ': ' + body.toString('utf8').slice(0, 200) : ''}`;
          if (errors > 1000 || err) {
            // A broken connection (or a flood of errors) ends this slot; the run reports it.
            inflight--;
            if (inflight === 0) {
              stopMeasure();
              finish();
            }
            return;
          }
        } else if (counted && phase === 'measure' && start >= t0) {
          if (count < lat.length) lat[count] = Number(end - start) / 1e6;
          count++;
          if (body) {
            responseBytes = body.length;
            try {
              samples.push(decode(spec.format, body));
            } catch {
              samples.push({ queryMs: NaN, poolMs: NaN, results: -1 });
            }
          }
          if (count >= spec.maxRequests) stopMeasure();
        }
        next();
      });
    };
    inflight++;
    next();
  };
  conns.forEach((c, i) => loop(c, i));
  const warm = setTimeout(startMeasure, spec.warmupMs);
  // Bounded in time whatever happens: the window plus a generous grace for draining.
  const guard = setTimeout(() => {
    stopMeasure();
    finish();
  }, spec.warmupMs + spec.durationMs + 30_000);
  await drained;
  clearTimeout(warm);
  clearTimeout(guard);
  if (phase === 'warmup') {
    // Every connection failed before the window opened.
    t0 = t1 = process.hrtime.bigint();
  }
  close();

  const n = Math.min(count, lat.length);
  const measured = lat.subarray(0, n);
  const [p50, p90, p99, p999, max] = percentiles(measured, [0.5, 0.9, 0.99, 0.999, 1]);
  const seconds = Number(t1 - t0) / 1e9;
  const ok = samples.filter((s) => Number.isFinite(s.queryMs));
  return {
    requests: count,
    errors,
    non200,
    firstError,
    seconds,
    rps: seconds > 0 ? count / seconds : 0,
    p50: p50!,
    p90: p90!,
    p99: p99!,
    p999: p999!,
    max: max!,
    mean: mean(measured),
    clientCores: cpuCores,
    clientSysCores: cpuSysCores,
    requestBytes: reqs.reduce((s, r) => s + (r.body?.length ?? 0), 0) / reqs.length,
    responseBytes,
    sampled: samples.length,
    serverQueryMs: ok.length ? mean(ok.map((s) => s.queryMs)) : null,
    poolElapsedMs: ok.length ? mean(ok.map((s) => s.poolMs)) : null,
    badResults: spec.target === 'search' ? samples.filter((s) => s.results !== spec.topK).length : 0,
  };
}

/** Loads the vectors of `file` through the insert route, msgpack batches, `concurrency` in flight. */
async function runInsert(spec: InsertSpec): Promise<InsertResult> {
  const raw = readFileSync(spec.file);
  const base = new Float32Array(raw.buffer, raw.byteOffset, spec.n * spec.dim);
  const batches = Math.ceil(spec.n / spec.batch);
  const headers = { 'content-type': MSGPACK, accept: MSGPACK, 'x-api-key': spec.apiKey };
  const { conns, close } = await openConns('net', spec.host, spec.port, spec.concurrency);
  const lat: number[] = [];
  let nextBatch = 0;
  let bodyBytes = 0;
  let vectors = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const worker = async (conn: Conn) => {
    for (;;) {
      const b = nextBatch++;
      if (b >= batches) return;
      const first = b * spec.batch;
      const count = Math.min(spec.batch, spec.n - first);
      const vectorsIn = [];
      for (let i = 0; i < count; i++) {
        const off = (first + i) * spec.dim * 4;
        vectorsIn.push({ id: first + i, values: Buffer.from(base.buffer, base.byteOffset + off, spec.dim * 4) });
      }
      const body = packr.pack({ vectors: vectorsIn });
      bodyBytes += body.length;
      const req = prepare(spec.host, spec.port, 'POST', spec.path, headers, body);
      const start = process.hrtime.bigint();
      const { status, reply } = await new Promise<{ status: number; reply: Buffer | null }>((resolve, reject) =>
        conn.send(req, true, (err, status, reply) => (err ? reject(err) : resolve({ status, reply }))),
      );
      lat.push(Number(process.hrtime.bigint() - start) / 1e6);
      if (status !== 200) throw new Error(`insert batch ${b}: status ${status}: ${reply?.toString('utf8').slice(0, 300)}`);
      const inserted = (packr.unpack(reply!) as { inserted?: number }).inserted;
      if (inserted !== count) throw new Error(`insert batch ${b}: inserted ${inserted}, sent ${count}`);
      vectors += count;
    }
  };
  try {
    await Promise.all(conns.map(worker));
  } finally {
    close();
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(cpu0);
  const [p50, p99] = percentiles(Float64Array.from(lat), [0.5, 0.99]);
  return { vectors, requests: batches, seconds, bodyBytes, p50: p50!, p99: p99!, clientCores: (c.user + c.system) / 1e6 / seconds };
}

process.on('message', (m: ToLoadgen) => {
  if (m.type === 'setup') {
    queries = m.queries;
    dim = m.dim;
  } else if (m.type === 'load') {
    runLoad(m.id, m.spec).then(
      (result) => send({ type: 'load-result', id: m.id, result }),
      (e: Error) => send({ type: 'error', id: m.id, message: e.stack ?? e.message }),
    );
  } else if (m.type === 'insert') {
    runInsert(m.spec).then(
      (result) => send({ type: 'insert-result', id: m.id, result }),
      (e: Error) => send({ type: 'error', id: m.id, message: e.stack ?? e.message }),
    );
  } else if (m.type === 'exit') {
    process.exit(0);
  }
});
// The orchestrator gone means the run is over.
process.on('disconnect', () => process.exit(0));
