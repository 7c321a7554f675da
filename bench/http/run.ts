// `npm run bench:http`: the HTTP load benchmark of the search route.
//
// 1. data: the seeded synthetic 768-d clustered set of the ANN bench (bench/ann/datasets.ts),
//    n vectors and 1000 queries (the cached prefix is reused, the rest generated in memory);
// 2. in-process: the same dataset built with Engine.open({}) here, and searchBatch throughput;
// 3. the service (startService) in a forked process on the first adapter, loaded over HTTP
//    (msgpack insert batches), sealed into one indexed partition;
// 4. for each HTTP adapter that serves on this Node (uWebSockets.js, node:http), the service on it
//    over the same data directory and a forked load generator: search at each concurrency, JSON
//    and msgpack; the service and the load generator pinned to a core each; the service under
//    perf (where its CPU goes, by step); then the adapter's bare server (a third process) for its
//    HTTP stack's ceiling;
// 5. diagnosis runs (unless --no-diagnose), in-process again, the report.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from '../../control-plane/node-flags.js';
import { ShardPool } from '../../engine/index.js';
import { loadSet, readMeta, SYNTHETIC, SyntheticGenerator } from '../ann/datasets.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { ADAPTERS, chooseAdapters, type AdapterInfo } from './adapters.js';
import { HELP, parsePlan, type ClientKind, type Format, type Plan } from './config.js';
import { MSGPACK, searchBody } from './bodies.js';
import { openHandler } from './handler.js';
import { buildInProcess, closedLoop, inlineSearch, LOAD_POLICY, measureBatch, poolSearch, stepCosts, topIds, type BatchResult, type PoolResult } from './inprocess.js';
import { PERF_NODE_FLAGS, PerfRecording, perfUnusable, summarisePerf } from './perf.js';
import { pin, pinUnusable } from './pin.js';
import { loadAverage, machineTimes, threadDelta, threadTimes, type MachineTimes, type ThreadTimes } from './procstat.js';
import type { FromLoadgen, FromServer, InsertResult, InsertSpec, LoadResult, LoadSpec, ToLoadgen, ToServer, Usage } from './protocol.js';
import { cpuUs, markdown, terminalTable, type AdapterRecord, type Report, type RunRecord } from './report.js';

const HOST = '127.0.0.1';
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const t00 = Date.now();

function log(msg: string): void {
  process.stderr.write(`[http ${((Date.now() - t00) / 1000).toFixed(0).padStart(4)}s] ${msg}\n`);
}

// ------------------------------------------------------------------------------------ children

const children = new Set<ChildProcess>();

function forkChild(script: string, args: string[], execArgv: string[] = []): ChildProcess {
  // With V8 flags (the perf run's --perf-basic-prof), V8 writes isolate-*.log files into the
  // working directory: keep them in the bench cache, not the checkout.
  const cwd = execArgv.length > 0 ? (mkdirSync(paths.cache, { recursive: true }), paths.cache) : undefined;
  const proc = fork(here(script), args, { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv, cwd });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return proc;
}

/** Ends the children this run started (each by its own pid). */
function killChildren(): void {
  for (const c of children) if (c.exitCode === null && c.pid) c.kill('SIGKILL');
}

class ServerChild {
  private usageWaiters: ((u: Usage) => void)[] = [];
  private constructor(
    readonly proc: ChildProcess,
    readonly ready: Extract<FromServer, { type: 'ready' }>,
  ) {
    proc.on('message', (m: FromServer) => {
      if (m.type === 'usage') this.usageWaiters.shift()?.(m.usage);
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  static start(script: string, args: string[], timeoutMs: number, execArgv: string[] = []): Promise<ServerChild> {
    const proc = forkChild(script, args, execArgv);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error(`${script} did not start within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      proc.on('message', function first(m: FromServer) {
        if (m.type === 'ready') {
          clearTimeout(timer);
          proc.off('message', first);
          resolve(new ServerChild(proc, m));
        } else if (m.type === 'failed') {
          clearTimeout(timer);
          reject(new Error(`${script} failed: ${m.message}`));
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${script} exited with ${code} before it was ready`));
      });
    });
  }

  usage(): Promise<Usage> {
    return new Promise((resolve) => {
      this.usageWaiters.push(resolve);
      this.proc.send({ type: 'usage' } satisfies ToServer);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.proc.exitCode !== null) return resolve();
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 30_000);
      this.proc.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.proc.send({ type: 'close' } satisfies ToServer);
    });
  }
}

class Loadgen {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; onPhase?: (p: string) => void }>();
  readonly proc = forkChild('./loadgen.js', []);

  constructor() {
    this.proc.on('message', (m: FromLoadgen) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.type === 'phase') p.onPhase?.(m.phase);
      else {
        this.pending.delete(m.id);
        if (m.type === 'error') p.reject(new Error(`load generator: ${m.message}`));
        else p.resolve(m.result);
      }
    });
    this.proc.once('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`the load generator exited (${code})`));
      this.pending.clear();
    });
  }

  setup(queries: Float32Array, dim: number): void {
    this.proc.send({ type: 'setup', queries, dim } satisfies ToLoadgen);
  }

  load(spec: LoadSpec, onPhase: (p: string) => void): Promise<LoadResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, onPhase });
      this.proc.send({ type: 'load', id, spec } satisfies ToLoadgen);
    });
  }

  insert(spec: InsertSpec): Promise<InsertResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.proc.send({ type: 'insert', id, spec } satisfies ToLoadgen);
    });
  }

  exit(): void {
    if (this.proc.connected) this.proc.send({ type: 'exit' } satisfies ToLoadgen);
  }
}

// ------------------------------------------------------------------------------------ data

function syntheticData(n: number, nq: number): { base: Float32Array; queries: Float32Array; source: string } {
  const dim = SYNTHETIC.dim;
  const gen = new SyntheticGenerator();
  const meta = readMeta('synthetic');
  let cached = 0;
  const base = new Float32Array(n * dim);
  let queries: Float32Array;
  if (meta && meta.dim === dim && meta.nq >= nq) {
    // The cache of the ANN bench holds a prefix of the same stream: check one row, then use it.
    cached = Math.min(meta.count, n);
    const set = loadSet('synthetic', cached, nq);
    const probe = new Float32Array(dim);
    gen.fill(probe, 0, cached - 1, 1);
    if (probe.every((v, i) => v === set.base[(cached - 1) * dim + i])) {
      base.set(set.base);
      queries = set.queries;
    } else {
      log('the synthetic cache differs from the generator; generating everything');
      cached = 0;
      queries = new Float32Array(nq * dim);
      gen.fill(queries, 1, 0, nq);
    }
  } else {
    queries = new Float32Array(nq * dim);
    gen.fill(queries, 1, 0, nq);
  }
  if (cached < n) log(`generating synthetic vectors ${cached}..${n} (${cached} from bench/.cache)`);
  for (let first = cached; first < n; first += 10_000) gen.fill(base.subarray(first * dim), 0, first, Math.min(10_000, n - first));
  const { latent, clusters, spread, noise, seed } = SYNTHETIC;
  return {
    base,
    queries,
    source: `the ANN bench's synthetic generator (bench/ann/datasets.ts, seed ${seed}): ${clusters} Gaussian clusters in ${latent}-d, spread ${spread}, linear map to ${dim}-d, noise ${noise}; queries from the independent stream`,
  };
}

// ------------------------------------------------------------------------------------ HTTP helpers

async function api(base: string, key: string | null, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed };
}

async function must(base: string, key: string | null, method: string, path: string, body?: unknown): Promise<any> {
  const r = await api(base, key, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until the dataset is one indexed partition holding all n vectors. */
async function waitSealed(base: string, key: string, id: string, n: number, timeoutMs: number): Promise<{ partitions: number; vectorCount: number }> {
  const until = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const index = await must(base, key, 'GET', `/datasets/${id}/index`);
    const stats = await must(base, key, 'GET', `/datasets/${id}/stats`);
    last = `index ${JSON.stringify(index)}, stats partitions ${stats.partitions}, vectors ${stats.vector_count}`;
    if (index.status === 'ready' && stats.partitions === 1 && stats.vector_count === n) return { partitions: stats.partitions, vectorCount: stats.vector_count };
    if (Date.now() > until) throw new Error(`the dataset did not become one ready partition in time: ${last}`);
    await sleep(250);
  }
}

// ------------------------------------------------------------------------------------ measured runs

interface Snap {
  at: bigint;
  threads: ThreadTimes;
  machine: MachineTimes;
  usage: Usage;
  own: NodeJS.CpuUsage;
}

async function snapshot(target: ServerChild): Promise<Snap> {
  const at = process.hrtime.bigint();
  const threads = threadTimes(target.pid);
  const machine = machineTimes();
  const own = process.cpuUsage();
  const usage = await target.usage();
  return { at, threads, machine, usage, own };
}

/** What runs beside a measuring window (a profiler): started as it opens, stopped as it closes. */
interface WindowWatch {
  open(): void;
  close(): Promise<void>;
}

async function loadRun(lg: Loadgen, target: ServerChild, spec: LoadSpec, group: RunRecord['group'], label: string, adapter: string, workers: number, watch?: WindowWatch): Promise<RunRecord> {
  const snaps: Promise<Snap>[] = [];
  let watched: Promise<void> = Promise.resolve();
  const result = await lg.load(spec, (phase) => {
    snaps.push(snapshot(target));
    if (phase === 'measure-start') watch?.open();
    else if (watch) watched = watch.close();
  });
  await watched;
  if (snaps.length !== 2) throw new Error(`${label}: the measuring window did not open and close (${result.firstError ?? 'no error reported'})`);
  const [a, b] = await Promise.all(snaps);
  const window = Number(b!.at - a!.at) / 1e9;
  const byThread = threadDelta(target.pid, a!.threads, b!.threads, workers);
  const serverThreads: Record<string, number> = {};
  const serverThreadsSys: Record<string, number> = {};
  for (const [k, v] of Object.entries(byThread.total)) serverThreads[k] = v / window;
  for (const [k, v] of Object.entries(byThread.sys)) serverThreadsSys[k] = v / window;
  // The process's own account (getrusage: every thread, also those that ended in the window).
  const cpuD = b!.usage.cpu.user + b!.usage.cpu.system - a!.usage.cpu.user - a!.usage.cpu.system;
  const serverCores = cpuD / 1e6 / window;
  const listed = Object.values(serverThreads).reduce((s, x) => s + x, 0);
  if (serverCores - listed > 0.02) serverThreads['threads that ended'] = serverCores - listed;
  const activeD = b!.usage.elu.active - a!.usage.elu.active;
  const idleD = b!.usage.elu.idle - a!.usage.elu.idle;
  const ownCores = (b!.own.user + b!.own.system - a!.own.user - a!.own.system) / 1e6 / window;
  const busy = (b!.machine.busy - a!.machine.busy) / window;
  const rec: RunRecord = {
    group,
    label,
    adapter,
    format: spec.target === 'bare-get' ? null : spec.format,
    concurrency: spec.concurrency,
    client: spec.client,
    result,
    window,
    windowUs: [Number(a!.at / 1000n), Number(b!.at / 1000n)],
    serverCores,
    serverMainCores: serverThreads.main ?? 0,
    serverThreads,
    serverThreadsSys,
    elu: activeD + idleD > 0 ? activeD / (activeD + idleD) : NaN,
    otherCores: Math.max(0, busy - serverCores - result.clientCores - ownCores),
  };
  log(
    `${`${adapter}: ${label}`.padEnd(50)} ${Math.round(result.rps).toString().padStart(6)} req/s  p50 ${result.p50.toFixed(3)}  p99 ${result.p99.toFixed(3)} ms` +
      `  server ${serverCores.toFixed(2)} (main ${rec.serverMainCores.toFixed(2)}, ELU ${rec.elu.toFixed(2)})  client ${result.clientCores.toFixed(2)}  other ${rec.otherCores.toFixed(2)} cores` +
      (result.errors ? `  ERRORS ${result.errors}: ${result.firstError}` : '') +
      (result.badResults ? `  BAD RESULTS ${result.badResults}` : ''),
  );
  return rec;
}

// ------------------------------------------------------------------------------------ each adapter

/** What the runs of every adapter share: the plan, the load generator, the loaded dataset. */
interface Bench {
  P: Plan;
  lg: Loadgen;
  runDir: string;
  /** The service's data directory: loaded once, then served by each adapter in turn. */
  dataDir: string;
  key: string;
  dsId: string;
  /** A load spec against `port`: the search route by default. */
  spec(port: number, over: Partial<LoadSpec>): LoadSpec;
}

const allCores = () => `0-${availableParallelism() - 1}`;
/** The diagnosis runs' shorter windows. */
const diagWindow = (P: Plan) => ({ warmupMs: Math.min(P.warmupMs, 1000), durationMs: P.diagDurationMs });

/** The service on adapter `a` over the loaded data directory, once it serves the dataset sealed. */
async function serveLoaded(b: Bench, a: AdapterInfo, threads: number, execArgv: string[] = []): Promise<ServerChild> {
  const server = await ServerChild.start('./server.js', [b.dataDir, a.key, String(threads)], 300_000, [...SERVICE_NODE_FLAGS, ...execArgv]);
  await waitSealed(server.ready.url, b.key, b.dsId, b.P.n, 5 * 60_000);
  return server;
}

/** GET /healthz of the service started on `a`: it must serve on that adapter. */
async function adapterRecord(server: ServerChild, a: AdapterInfo): Promise<AdapterRecord> {
  const health = await must(server.ready.url, null, 'GET', '/healthz');
  if (health.adapter !== a.name) throw new Error(`the service started with --http-adapter ${a.key} serves on ${health.adapter}`);
  log(`${a.name}: ${server.ready.detail}; Node ${health.node}, ISA ${health.isa}`);
  return { key: a.key, name: a.name, detail: server.ready.detail, health };
}

/** Search in each format at each concurrency. */
async function searchRuns(b: Bench, server: ServerChild, a: AdapterInfo): Promise<RunRecord[]> {
  const runs: RunRecord[] = [];
  for (const format of b.P.formats) {
    for (const c of b.P.concurrency) {
      runs.push(await loadRun(b.lg, server, b.spec(server.ready.port, { format, concurrency: c }), 'search', `search ${format} c=${c}`, a.name, b.P.threads));
    }
  }
  return runs;
}

/**
 * One core each: every thread of the service on core 0, the load generator on core 1, search at
 * the concurrencies from 16. The service closes after them; the load generator gets every core back.
 */
async function pinnedRuns(b: Bench, server: ServerChild, a: AdapterInfo): Promise<RunRecord[]> {
  pin(server.pid, '0');
  pin(b.lg.proc.pid!, '1');
  const runs: RunRecord[] = [];
  for (const format of b.P.formats) {
    for (const c of b.P.concurrency.filter((x) => x >= 16)) {
      runs.push(await loadRun(b.lg, server, b.spec(server.ready.port, { format, concurrency: c }), 'pinned', `search ${format} c=${c}, pinned`, a.name, b.P.threads));
    }
  }
  pin(b.lg.proc.pid!, allCores());
  return runs;
}

/** Where the service's CPU goes on `a`: on-CPU samples (perf) at concurrency 16, a process per format. */
async function profileRuns(b: Bench, a: AdapterInfo): Promise<{ runs: RunRecord[]; profiles: Report['profiles'] }> {
  const runs: RunRecord[] = [];
  const profiles: Report['profiles'] = [];
  for (const format of b.P.formats) {
    const prof = await serveLoaded(b, a, b.P.threads, PERF_NODE_FLAGS);
    const file = join(b.runDir, `perf-${a.key}-${format}.data`);
    let recording: PerfRecording | undefined;
    const watch = { open: () => void (recording = PerfRecording.start(prof.pid, file)), close: () => recording?.stop() ?? Promise.resolve() };
    const r = await loadRun(b.lg, prof, b.spec(prof.ready.port, { format, concurrency: 16 }), 'profile', `search ${format}, profiled`, a.name, b.P.threads, watch);
    runs.push(r);
    await prof.close();
    mkdirSync(paths.cache, { recursive: true });
    profiles.push({ adapter: a.name, format, requests: r.result.requests, ...summarisePerf(file, prof.pid, r.result.requests, join(paths.cache, `http-perf-${a.key}-${format}.txt`)) });
    rmSync(`/tmp/perf-${prof.pid}.map`, { force: true });
  }
  return { runs, profiles };
}

/**
 * The adapter's HTTP stack alone, its ceiling (bare-uws.ts, bare-node.ts): GET /hello at each
 * concurrency; with the diagnosis, POST /hello with the search bodies' sizes (the cost of
 * uploading them) and, when `clients`, GET with the other clients (the client's own cost: once
 * per benchmark is enough).
 */
async function bareRuns(b: Bench, a: AdapterInfo, clients: boolean): Promise<RunRecord[]> {
  const bare = await ServerChild.start(a.bare, [], 30_000);
  log(`bare ${a.name}: ${bare.ready.detail}`);
  const spec = (over: Partial<LoadSpec>) => b.spec(bare.ready.port, { target: 'bare-get', path: '/hello', apiKey: undefined, sampleEvery: 0, ...over });
  const runs: RunRecord[] = [];
  for (const c of b.P.concurrency) runs.push(await loadRun(b.lg, bare, spec({ concurrency: c }), 'bare', `bare GET c=${c}`, a.name, 0));
  if (b.P.diagnose) {
    const d = diagWindow(b.P);
    for (const format of ['json', 'msgpack'] as Format[]) {
      runs.push(await loadRun(b.lg, bare, spec({ ...d, target: 'bare-post', format, concurrency: 16 }), 'diag', `bare POST ${format}-sized body`, a.name, 0));
    }
    for (const client of clients ? (['http', 'fetch'] as ClientKind[]) : []) {
      if (client === b.P.client) continue;
      runs.push(await loadRun(b.lg, bare, spec({ ...d, client, concurrency: 16 }), 'diag', `bare GET, client ${client}`, a.name, 0));
    }
  }
  await bare.close();
  return runs;
}

/** The goals, per adapter, and node:http's CPU against uWS's where both ran. */
function targetsOf(P: Plan, runs: RunRecord[], adapters: AdapterInfo[], inProcessCpuUs: number, inProcessPinned: BatchResult | null): Report['targets'] {
  const targets: Report['targets'] = [];
  const search = runs.filter((r) => r.group === 'search');
  const overheadGoal: Record<Format, number> = { msgpack: 25, json: 60 };
  // The old throughput goals, per core: what they meant once the load generator has its own core.
  const pinnedGoal: Record<Format, number> = { msgpack: 0.85, json: 0.7 };
  for (const a of adapters) {
    const mine = search.filter((r) => r.adapter === a.name);
    for (const f of P.formats) {
      for (const r of mine.filter((x) => x.format === f && x.concurrency >= 16)) {
        const v = cpuUs(r) - inProcessCpuUs;
        targets.push({ name: `${a.name}: service CPU per request − in-process CPU per query, ${f}, concurrency ${r.concurrency}`, value: `${Math.round(v)} µs`, target: `≤ ${overheadGoal[f]} µs`, met: v <= overheadGoal[f] });
      }
    }
    for (const f of P.formats) {
      const r = mine.find((x) => x.format === f && x.concurrency === 16);
      if (r) targets.push({ name: `${a.name}: p99 at concurrency 16, ${f}`, value: `${r.result.p99.toFixed(2)} ms`, target: '< 10 ms', met: r.result.p99 < 10 });
    }
    for (const f of P.formats) {
      const rs = runs.filter((r) => r.group === 'pinned' && r.adapter === a.name && r.format === f);
      if (!rs.length || !inProcessPinned) continue;
      const best = rs.reduce((x, y) => (y.result.rps > x.result.rps ? y : x));
      const v = best.result.rps / best.serverCores / (inProcessPinned.qps / inProcessPinned.cores);
      targets.push({ name: `${a.name}: pinned, req/s per service core ÷ in-process q/s per core, ${f} (the old throughput goal)`, value: `${Math.round(v * 100)}%`, target: `≥ ${Math.round(pinnedGoal[f] * 100)}%`, met: v >= pinnedGoal[f] });
    }
  }
  // node:http is the product where uWS does not load (Node 24): it should cost not much more.
  const on = (a: AdapterInfo, f: Format, c: number) => search.find((r) => r.adapter === a.name && r.format === f && r.concurrency === c);
  for (const f of P.formats) {
    for (const c of [16, 64]) {
      const u = on(ADAPTERS.uws, f, c);
      const n = on(ADAPTERS.node, f, c);
      if (!u || !n) continue;
      const v = cpuUs(n) / cpuUs(u);
      targets.push({ name: `node:http service CPU per request ÷ uWebSockets.js's, ${f}, concurrency ${c}`, value: `${v.toFixed(2)}×`, target: '≤ 1.5×', met: v <= 1.5 });
    }
  }
  return targets;
}

// ------------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  let plan: ReturnType<typeof parsePlan>;
  try {
    plan = parsePlan(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${HELP}`);
    process.exit(2);
  }
  if (plan === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if ('render' in plan) {
    // Re-render the markdown of a recorded run (report changes need no new measurement).
    const report = JSON.parse(readFileSync(plan.render, 'utf8')) as Report;
    const md = plan.render.replace(/\.json$/, '') + '.md';
    writeFileSync(md, markdown(report));
    process.stdout.write(terminalTable(report) + `\nwrote ${md}\n`);
    return;
  }
  const P = plan;
  const startedAt = new Date().toISOString();
  const loadStart = loadAverage();
  const commit = gitCommit();
  let addon = 'not found';
  try {
    addon = `native/build/Release/sable.node built ${statSync(join(paths.root, 'native', 'build', 'Release', 'sable.node')).mtime.toISOString()}`;
  } catch {
    // reported as not found
  }
  const cpu = cpuInfo();
  const { adapters, uwsAbsent } = chooseAdapters(P.adapters);
  log(`${P.mode} mode on Node ${process.version}: ${P.n} x ${P.dim}, concurrency ${P.concurrency.join('/')}, ${P.formats.join('+')}, ${P.durationMs / 1000} s windows, client ${P.client}, adapters ${adapters.map((a) => a.name).join(', ')}; commit ${commit}; load ${loadStart.join(' ')}`);
  if (uwsAbsent) log(`uWebSockets.js not measured: ${uwsAbsent}`);
  // Bounded in time whatever happens.
  const deadlineMin = P.mode === 'quick' ? 20 : 60;
  setTimeout(() => {
    log(`giving up after ${deadlineMin} min`);
    killChildren();
    process.exit(1);
  }, deadlineMin * 60_000).unref();

  const runDir = mkdtempSync(join(tmpdir(), 'sable-bench-http-'));
  const cleanup = () => {
    killChildren();
    rmSync(runDir, { recursive: true, force: true });
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      log(`${sig}: stopping`);
      cleanup();
      process.exit(130);
    });
  }
  const notes: string[] = [];
  try {
    // 1. data
    const data = syntheticData(P.n, P.nq);
    const baseFile = join(runDir, 'base.f32');
    writeFileSync(baseFile, new Uint8Array(data.base.buffer, data.base.byteOffset, data.base.byteLength));
    log(`data ready: ${P.n} x ${P.dim} + ${P.nq} queries`);

    // 2. in-process build and first measurement
    const built = await buildInProcess(data.base, P.n, P.dim, P.insertBatch);
    log(`in-process: upsert ${built.upsertSeconds.toFixed(1)} s, flush ${built.flushSeconds.toFixed(1)} s, ${built.partitions} partition(s), ${built.vectors} vectors, ISA ${built.isa}`);
    if (built.partitions !== 1 || built.vectors !== P.n) notes.push(`in-process dataset: ${built.partitions} partitions, ${built.vectors} vectors (expected 1 and ${P.n})`);
    const inProcess: BatchResult[] = [];
    const batchOpts = { topK: P.topK, threads: P.threads, includeMetadata: true, warmupMs: P.warmupMs, durationMs: P.durationMs };
    inProcess.push(await measureBatch('before the HTTP runs', built.ds, data.queries, batchOpts));
    log(`in-process searchBatch: ${Math.round(inProcess[0]!.qps)} q/s (other load ${inProcess[0]!.otherCores.toFixed(2)} cores)`);

    // 3. the service on the first adapter, loaded over HTTP
    const first = adapters[0]!;
    const dataDir = join(runDir, 'service');
    mkdirSync(dataDir);
    let server = await ServerChild.start('./server.js', [dataDir, first.key, String(P.threads)], 120_000, [...SERVICE_NODE_FLAGS]);
    const base = server.ready.url;
    const key = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    log(`service up at ${base} on ${server.ready.adapter}: loading the data`);
    const ds = await must(base, key, 'POST', '/datasets', { name: 'bench-http', dim: P.dim, metric: 'cosine' });
    await must(base, key, 'POST', `/datasets/${ds.id}/ensure-engine`);
    await must(base, key, 'PUT', `/datasets/${ds.id}/promotion-policy`, LOAD_POLICY);
    const lg = new Loadgen();
    lg.setup(data.queries, P.dim);
    const insert = await lg.insert({ host: HOST, port: server.ready.port, path: `/datasets/${ds.id}/insert`, apiKey: key, file: baseFile, n: P.n, dim: P.dim, batch: P.insertBatch, concurrency: P.insertConcurrency });
    log(`insert: ${insert.vectors} vectors in ${insert.seconds.toFixed(1)} s = ${Math.round(insert.vectors / insert.seconds)} vectors/s`);
    const s0 = Date.now();
    await must(base, key, 'PUT', `/datasets/${ds.id}/promotion-policy`, { max_buffer_age_ms: 1 });
    const sealed = await waitSealed(base, key, ds.id, P.n, 15 * 60_000);
    const sealSeconds = (Date.now() - s0) / 1000;
    await must(base, key, 'PUT', `/datasets/${ds.id}/promotion-policy`, { max_buffer_age_ms: 10_000 });
    log(`sealed: ${sealed.partitions} partition, ${sealed.vectorCount} vectors, ${sealSeconds.toFixed(1)} s`);

    // Same data on both sides: the top-10 ids of the first queries agree.
    const checkQ = 20;
    const local = await topIds(built.ds, data.queries, checkQ, P.topK);
    let agree = 0;
    let sampleResponse: unknown = null;
    for (let i = 0; i < checkQ; i++) {
      const r = await must(base, key, 'POST', `/datasets/${ds.id}/search`, { query: Array.from(data.queries.subarray(i * P.dim, (i + 1) * P.dim)), top_k: P.topK });
      sampleResponse ??= r;
      const ids = (r.results as { id: number }[]).map((h) => h.id);
      if (ids.length === P.topK && ids.every((id, j) => id === local[i]![j])) agree++;
    }
    if (agree < checkQ) notes.push(`HTTP and in-process top-10 ids differ on ${checkQ - agree} of ${checkQ} checked queries (same data and engine; index builds may differ slightly)`);

    // 4. each adapter in turn on the same data: search, pinned, profile, then its bare server
    const b: Bench = {
      P,
      lg,
      runDir,
      dataDir,
      key,
      dsId: ds.id,
      spec: (port, over) => ({
        host: HOST,
        port,
        target: 'search',
        format: 'json',
        path: `/datasets/${ds.id}/search`,
        apiKey: key,
        topK: P.topK,
        concurrency: 1,
        warmupMs: P.warmupMs,
        durationMs: P.durationMs,
        maxRequests: P.maxRequestsPerRun,
        client: P.client,
        sampleEvery: 16,
        ...over,
      }),
    };
    const noProfile = P.profile ? perfUnusable() : 'skipped (--no-profile)';
    if (noProfile) notes.push(`no CPU profile: ${noProfile}`);
    const noPin = !P.pin ? 'skipped (--no-pin)' : availableParallelism() < 2 ? 'fewer than 2 cores' : pinUnusable();
    if (noPin) notes.push(`no pinned runs: ${noPin}`);
    const runs: RunRecord[] = [];
    const profiles: Report['profiles'] = [];
    const measured: AdapterRecord[] = [];
    for (const a of adapters) {
      // The first adapter's service is the one that loaded the data.
      if (a !== first) server = await serveLoaded(b, a, P.threads);
      measured.push(await adapterRecord(server, a));
      runs.push(...(await searchRuns(b, server, a)));
      if (!noPin) runs.push(...(await pinnedRuns(b, server, a)));
      await server.close();
      if (!noProfile) {
        const p = await profileRuns(b, a);
        runs.push(...p.runs);
        profiles.push(...p.profiles);
      }
      runs.push(...(await bareRuns(b, a, a === first)));
    }
    // The pinned runs' reference: the in-process search on one core too, so the ratio is per core on both sides.
    let inProcessPinned: BatchResult | null = null;
    if (!noPin) {
      pin(process.pid, '0');
      inProcessPinned = await measureBatch('one core', built.ds, data.queries, { ...batchOpts, threads: 1 });
      pin(process.pid, allCores());
      log(`in-process searchBatch on one core: ${Math.round(inProcessPinned.qps)} q/s`);
    }

    // 5. diagnosis
    let diag: Report['diag'] = null;
    if (P.diagnose) {
      const d = diagWindow(P);
      const c = 16;
      // The search route without transport work on the client side: include_metadata false is
      // not what the ratios use, so it stays out. One search thread instead of two (on the first
      // adapter): the main thread, the client and the workers share two cores.
      server = await serveLoaded(b, first, 1);
      for (const format of P.formats) {
        runs.push(await loadRun(lg, server, b.spec(server.ready.port, { ...d, format, concurrency: c }), 'diag', `search ${format}, 1 search thread`, first.name, 1));
      }
      await server.close();
      // Without HTTP, in this process: the search inline, through the service's ShardPool (the
      // batched libuv hop), and through the service's whole handler (Router.handle) on its data.
      const poolRuns: PoolResult[] = [];
      poolRuns.push(await closedLoop('Dataset.searchDetailed on the main thread (no hop)', 1, d, inlineSearch(built.ds, data.queries, P.topK)));
      const pool = new ShardPool({ threads: P.threads });
      for (const pc of [1, 16]) {
        poolRuns.push(await closedLoop('Dataset.searchDetailed on the ShardPool (off-thread hop, then metadata reads)', pc, d, poolSearch(built.ds, pool, data.queries, P.topK)));
      }
      await pool.close();
      const handler = await openHandler(dataDir, P.threads);
      for (const format of P.formats) {
        const headers: Record<string, string> =
          format === 'json' ? { 'content-type': 'application/json', 'x-api-key': key } : { 'content-type': MSGPACK, accept: MSGPACK, 'x-api-key': key };
        const bodies = Array.from({ length: P.nq }, (_, i) => searchBody(format, data.queries.subarray(i * P.dim, (i + 1) * P.dim), P.topK));
        const call = async (i: number) => {
          const body = bodies[i % bodies.length]!;
          const res = await handler.handle({
            method: 'POST',
            path: `/datasets/${ds.id}/search`,
            query: new URLSearchParams(),
            headers: { ...headers, 'content-length': String(body.length) },
            body,
            startedAt: process.hrtime.bigint(),
          });
          if (res.status !== 200) throw new Error(`Router.handle answered ${res.status}: ${String(res.body).slice(0, 200)}`);
        };
        for (const pc of [1, 16]) poolRuns.push(await closedLoop(`Router.handle, ${format} body (the whole route, no HTTP)`, pc, d, call));
      }
      await handler.close();
      for (const r of poolRuns) log(`${r.label} c=${r.concurrency}: ${Math.round(r.qps)} q/s, p50 ${r.p50.toFixed(3)} p99 ${r.p99.toFixed(3)} ms, main ${r.mainCores.toFixed(2)} cores, process ${r.cores.toFixed(2)}`);
      const batchNoMetadata = await measureBatch('no metadata', built.ds, data.queries, { ...batchOpts, includeMetadata: false, ...d });
      log(`in-process searchBatch without metadata: ${Math.round(batchNoMetadata.qps)} q/s`);
      const steps = stepCosts(data.queries, P.dim, P.topK, key, sampleResponse);
      for (const s of steps) log(`${s.step}: ${s.us.toFixed(1)} µs`);
      diag = { pool: poolRuns, batchNoMetadata, steps };
    }
    lg.exit();

    // 6. in-process again (drift), the report
    inProcess.push(await measureBatch('after the HTTP runs', built.ds, data.queries, batchOpts));
    log(`in-process searchBatch: ${Math.round(inProcess[1]!.qps)} q/s (other load ${inProcess[1]!.otherCores.toFixed(2)} cores)`);
    await built.engine.close();
    const inProcessQps = (inProcess[0]!.qps + inProcess[1]!.qps) / 2;
    const inProcessCpuUs = (inProcess.reduce((s, b) => s + b.cores * b.seconds, 0) / inProcess.reduce((s, b) => s + b.qps * b.seconds, 0)) * 1e6;

    const targets = targetsOf(P, runs, adapters, inProcessCpuUs, inProcessPinned);
    const errors = runs.reduce((s, r) => s + r.result.errors, 0);
    if (errors) notes.push(`${errors} requests failed over all runs (see the errors column)`);
    const bad = runs.reduce((s, r) => s + r.result.badResults, 0);
    if (bad) notes.push(`${bad} sampled responses did not hold top_k results`);

    const loadEnd = loadAverage();
    const report: Report = {
      plan: P,
      startedAt,
      finishedAt: new Date().toISOString(),
      minutes: (Date.now() - t00) / 60_000,
      commit,
      addon,
      cpu,
      node: process.version,
      loadStart,
      loadEnd,
      adapters: measured,
      uwsAbsent,
      data: { n: P.n, dim: P.dim, nq: P.nq, metric: 'cosine', source: data.source },
      insert: { ...insert, adapter: first.name, sealSeconds, partitions: sealed.partitions, vectorCount: sealed.vectorCount },
      inProcessBuild: { upsertSeconds: built.upsertSeconds, flushSeconds: built.flushSeconds, partitions: built.partitions, vectors: built.vectors, isa: built.isa },
      sameData: { queries: checkQ, overlap: agree / checkQ },
      inProcess,
      inProcessQps,
      inProcessCpuUs,
      inProcessPinned,
      runs,
      profiles,
      diag,
      targets,
      notes,
    };
    const outDir = P.record ? paths.results : paths.cache;
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, `${P.outName}.json`), JSON.stringify(report, null, 2) + '\n');
    writeFileSync(join(outDir, `${P.outName}.md`), markdown(report));
    process.stdout.write('\n' + terminalTable(report) + '\n\n');
    process.stdout.write(`commit ${commit}, Node ${process.version}, ISA ${measured[0]!.health.isa}, adapters ${measured.map((a) => a.name).join(' + ')}, load ${loadStart[0]} -> ${loadEnd[0]}\n`);
    process.stdout.write(`wrote ${join(outDir, P.outName)}.md and .json\n`);
  } finally {
    cleanup();
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`bench:http failed: ${e.stack ?? e.message}\n`);
    killChildren();
    process.exit(1);
  },
);
