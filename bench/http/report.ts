// The results of one run: the JSON record, the markdown report and the terminal table.
import type { AdapterKey, ClientKind, Format, Plan } from './config.js';
import type { BatchResult, PoolResult, StepCost } from './inprocess.js';
import type { PerfSummary } from './perf.js';
import type { InsertResult, LoadResult } from './protocol.js';

export interface RunRecord {
  group: 'search' | 'bare' | 'diag' | 'profile' | 'pinned';
  label: string;
  /** The HTTP stack that served the run: the service's adapter or the bare server's ('uWebSockets.js', 'node:http'). */
  adapter: string;
  format: Format | null;
  concurrency: number;
  client: ClientKind;
  result: LoadResult;
  window: number;
  /** The window on the monotonic clock (µs), for the CPU profiles. */
  windowUs: [number, number];
  /** CPU of the server process over the window, in cores, and by thread name. */
  serverCores: number;
  serverMainCores: number;
  serverThreads: Record<string, number>;
  /** The kernel (system) part of serverThreads. */
  serverThreadsSys: Record<string, number>;
  /** Event-loop utilisation of the server's main thread over the window (0..1). */
  elu: number;
  /** CPU used by every other process of the machine over the window, in cores. */
  otherCores: number;
}

export interface Report {
  plan: Plan;
  startedAt: string;
  finishedAt: string;
  minutes: number;
  commit: string;
  /** The native addon measured (other work in the tree may rebuild it). */
  addon: string;
  cpu: { model: string; cores: number; simd: string[] };
  /** process.version of the run (the service and every child run on the same Node). */
  node: string;
  loadStart: number[];
  loadEnd: number[];
  /** The adapters measured, in order: GET /healthz of the service on each, and the build that served. */
  adapters: AdapterRecord[];
  /** Why uWebSockets.js cannot serve on this Node (loadUws()'s message), or null where it can. */
  uwsAbsent: string | null;
  data: { n: number; dim: number; nq: number; metric: string; source: string };
  /** The load through the first adapter. */
  insert: InsertResult & { adapter: string; sealSeconds: number; partitions: number; vectorCount: number };
  inProcessBuild: { upsertSeconds: number; flushSeconds: number; partitions: number; vectors: number; isa: string };
  sameData: { queries: number; overlap: number };
  inProcess: BatchResult[];
  /** The in-process throughput the ratios divide by: mean of the runs before and after HTTP. */
  inProcessQps: number;
  /** CPU per query of the in-process runs (µs): the load-independent side of the comparison. */
  inProcessCpuUs: number;
  runs: RunRecord[];
  diag: {
    pool: PoolResult[];
    batchNoMetadata: BatchResult | null;
    steps: StepCost[];
  } | null;
  /** searchBatch with one thread, the process pinned to one core (the pinned runs' reference). */
  inProcessPinned: BatchResult | null;
  /** perf profiles of the service at concurrency 16, one per adapter and format. */
  profiles: ({ adapter: string; format: Format; requests: number } & PerfSummary)[];
  targets: { name: string; value: string; target: string; met: boolean }[];
  notes: string[];
}

export interface AdapterRecord {
  key: AdapterKey;
  name: string;
  /** The service's own account of it: the uWS binary that loaded, or why node:http. */
  detail: string;
  health: { status: string; adapter: string; node: string; isa: string };
}

const f0 = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '-');
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '-');
const pct = (x: number) => (Number.isFinite(x) ? `${Math.round(x * 100)}%` : '-');

/** A markdown table; `align`: each column's, or how many leading columns are text (the rest numbers). */
function table(head: string[], rows: string[][], align: ('l' | 'r')[] | number = 1): string {
  const a = typeof align === 'number' ? head.map((_, i) => (i < align ? 'l' : 'r')) : align;
  return [
    `| ${head.join(' | ')} |`,
    `| ${a.map((x) => (x === 'l' ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

function threadSplit(r: RunRecord): string {
  return Object.entries(r.serverThreads)
    .map(([k, v]) => `${k} ${f2(v)}`)
    .join(', ');
}

/** A run's name in the tables: the search format, or the bare server's route. */
const runName = (r: RunRecord) => (r.group === 'bare' ? 'bare GET /hello' : `search ${r.format}`);

/** The main table: each adapter's search runs and its bare server's ceiling. */
export function mainRows(rep: Report): string[][] {
  const rows: string[][] = [];
  for (const r of rep.runs.filter((x) => x.group === 'search' || x.group === 'bare')) {
    const res = r.result;
    rows.push([
      r.adapter,
      runName(r),
      String(r.concurrency),
      f0(res.rps),
      f3(res.p50),
      f3(res.p99),
      f3(res.p999),
      r.group === 'search' ? pct(res.rps / rep.inProcessQps) : '-',
      f2(r.serverCores),
      f2(r.elu),
      f2(res.clientCores),
      f2(r.otherCores),
      f0(cpuUs(r)),
      r.group === 'search' ? pct(rep.inProcessCpuUs / cpuUs(r)) : '-',
      String(res.errors),
    ]);
  }
  return rows;
}

export const MAIN_HEAD = ['adapter', 'run', 'conc.', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'req/s ÷ in-process', 'server cores', 'server ELU', 'client cores', 'other load cores', 'server CPU µs/req', 'in-process CPU ÷ server CPU', 'errors'];

/** µs of CPU per request answered in a run's window, for `cores` of use over it. */
export const perRequestUs = (r: RunRecord, cores: number) => ((cores * r.window) / Math.max(1, r.result.requests)) * 1e6;
/** CPU of the whole service process (every thread) per request, µs. */
export const cpuUs = (r: RunRecord) => perRequestUs(r, r.serverCores);

/** Where each adapter stands at concurrency 16, per format: the first table to read. */
function summary(rep: Report): { head: string[]; rows: string[][] } {
  const pinned = rep.runs.some((r) => r.group === 'pinned');
  const head = ['adapter', 'format', 'req/s', 'p99 ms', 'service CPU µs/req', 'added by the service µs', ...(pinned ? ['pinned req/s per service core'] : [])];
  const rows: string[][] = [];
  for (const a of rep.adapters) {
    for (const f of rep.plan.formats) {
      const at16 = (group: RunRecord['group']) => rep.runs.find((r) => r.group === group && r.adapter === a.name && r.format === f && r.concurrency === 16);
      const r = at16('search');
      if (!r) continue;
      const p = at16('pinned');
      rows.push([a.name, f, f0(r.result.rps), f2(r.result.p99), f0(cpuUs(r)), f0(cpuUs(r) - rep.inProcessCpuUs), ...(pinned ? [p ? f0(p.result.rps / p.serverCores) : '-'] : [])]);
    }
  }
  return { head, rows };
}

/** Why uWebSockets.js is not among the adapters measured, or null when it is. */
function uwsMissing(rep: Report): string | null {
  return rep.adapters.some((a) => a.key === 'uws') ? null : (rep.uwsAbsent ?? 'not asked (--adapters)');
}

/** A table for the terminal: the first `textColumns` columns left-aligned, the numbers right-aligned. */
function aligned(head: string[], body: string[][], textColumns: number): string[] {
  const rows = [head, ...body];
  const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i < textColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
}

export function terminalTable(rep: Report): string {
  const sum = summary(rep);
  const missing = uwsMissing(rep);
  const out = [`Node ${rep.node}${missing ? `; uWebSockets.js not measured: ${missing}` : ''}`, ''];
  if (sum.rows.length) out.push('At concurrency 16:', ...aligned(sum.head, sum.rows, 2), '');
  out.push(...aligned(MAIN_HEAD, mainRows(rep), 2));
  out.push('');
  for (const b of rep.inProcess) out.push(`in-process searchBatch (${b.label}, threads ${b.threads}): ${f0(b.qps)} q/s (process ${f2(b.cores)} cores, other load ${f2(b.otherCores)} cores)`);
  out.push(`in-process throughput used for the ratios: ${f0(rep.inProcessQps)} q/s; in-process CPU per query ${f0(rep.inProcessCpuUs)} µs`);
  out.push(`insert over HTTP (${rep.insert.adapter}, msgpack, ${rep.plan.insertBatch}/request, ${rep.plan.insertConcurrency} in flight): ${f0(rep.insert.vectors / rep.insert.seconds)} vectors/s; seal to one indexed partition: ${f1(rep.insert.sealSeconds)} s`);
  out.push('');
  for (const t of rep.targets) out.push(`${t.met ? 'MET    ' : 'NOT MET'}  ${t.name}: ${t.value} (target ${t.target})`);
  return out.join('\n');
}

export function markdown(rep: Report): string {
  const p = rep.plan;
  const L: string[] = [];
  L.push(`# HTTP load benchmark on Node ${rep.node} (${p.mode} mode)`);
  L.push('');
  L.push(`Generated by \`npm run bench:http${p.mode === 'quick' ? ' -- --quick' : ''}\` on ${rep.startedAt} in ${rep.minutes.toFixed(1)} min.`);
  L.push('');
  L.push(`- **Node ${rep.node}**; adapters measured, each on the same data, load generator and in-process reference: ${rep.adapters.map((a) => `**${a.name}** (${a.detail})`).join(', ')}`);
  const missing = uwsMissing(rep);
  if (missing) L.push(`- uWebSockets.js not measured: ${missing}`);
  L.push(`- commit: \`${rep.commit}\`; ${rep.addon}`);
  L.push(`- CPU: ${rep.cpu.model}, ${rep.cpu.cores} cores; SIMD: ${rep.cpu.simd.join(', ') || 'n/a'}`);
  L.push(`- load average (1 min) at start / end: ${rep.loadStart[0]} / ${rep.loadEnd[0]} on ${rep.cpu.cores} cores (5 min: ${rep.loadStart[1]} / ${rep.loadEnd[1]}); the "other load" column is what every other process of the machine used during each window`);
  L.push(`- service: \`startService\` in its own process, one adapter at a time on the same data directory, kernel ISA from GET /healthz: **${[...new Set(rep.adapters.map((a) => a.health.isa))].join(' / ')}**, ${p.threads} search threads`);
  L.push(`- data: ${rep.data.n.toLocaleString('en-US')} × ${rep.data.dim}, ${rep.data.metric}, ${rep.data.nq} queries cycled; ${rep.data.source}`);
  L.push(`- search: top_k ${p.topK}, engine defaults (index type \`sable\`, default nprobe), metadata included (the route's default); in-process and HTTP return the same top-10 ids on ${pct(rep.sameData.overlap)} of ${rep.sameData.queries} checked queries`);
  L.push(`- load generator: its own forked process, client \`${p.client}\` (${clientText(p.client)}), closed loop, loopback; each run ${p.warmupMs / 1000} s warm-up then a fixed ${p.durationMs / 1000} s window; latency percentiles from every request's own timing`);
  L.push('');
  const sum = summary(rep);
  if (sum.rows.length) {
    L.push('## Summary: concurrency 16');
    L.push('');
    L.push(table(sum.head, sum.rows, 2));
    L.push('');
    L.push(`"added by the service": service CPU per request − in-process CPU per query (${f0(rep.inProcessCpuUs)} µs)${rep.runs.some((r) => r.group === 'pinned') ? '; "pinned": the service on one core, the load generator on the other' : ''}. The sections below have every run.`);
    L.push('');
  }
  L.push('## Targets');
  L.push('');
  L.push(table(['target', 'measured', 'goal', ''], rep.targets.map((t) => [t.name, t.value, t.target, t.met ? 'met' : '**not met**']), ['l', 'r', 'r', 'l']));
  L.push('');
  L.push('A closed loop at concurrency 16 has a mean latency of 16 / throughput (Little\'s law), so p99 < 10 ms needs more than 1,600 req/s even if every request took the same time.');
  L.push('');
  L.push(`"Service CPU per request": the CPU of the whole service process (every thread: HTTP, parsing, the search on the native threads, metadata reads, the answer) over a measuring window, divided by the requests answered in it. "In-process CPU per query": the same search through \`searchBatch\` in the benchmark process (same dataset, same queries, top_k ${p.topK}, threads ${p.threads}, metadata included; ${f0(rep.inProcessCpuUs)} µs, mean of the measurements before and after the HTTP runs). The difference is what the service adds to each search, on any machine; other load on a shared machine disturbs it much less than throughput.`);
  L.push('');
  L.push('## Service CPU per request');
  L.push('');
  L.push(table(['adapter', 'run', 'conc.', 'req/s', 'service CPU µs/req', 'main thread µs/req', 'other threads µs/req', 'in-process µs/query', 'added by the service µs', 'goal µs'], rep.runs.filter((r) => r.group === 'search').map((r) => {
    const main = perRequestUs(r, r.serverThreads.main ?? 0);
    return [r.adapter, `search ${r.format}`, String(r.concurrency), f0(r.result.rps), f0(cpuUs(r)), f0(main), f0(cpuUs(r) - main), f0(rep.inProcessCpuUs), f0(cpuUs(r) - rep.inProcessCpuUs), r.concurrency >= 16 ? (r.format === 'msgpack' ? '≤ 25' : '≤ 60') : '-'];
  }), 2));
  L.push('');
  const pinned = rep.runs.filter((r) => r.group === 'pinned');
  const ref = rep.inProcessPinned;
  if (pinned.length && ref) {
    L.push('## One core each (taskset)');
    L.push('');
    L.push(`Every thread of the service (each adapter in turn) pinned to core 0, the load generator to core 1, so the load generator takes nothing from the service. The reference: \`searchBatch\` with one thread, the benchmark process pinned to one core: ${f0(ref.qps)} q/s at ${f2(ref.cores)} cores = ${f0(ref.qps / ref.cores)} q/s per core (${f0((ref.cores / ref.qps) * 1e6)} µs/query).`);
    L.push('');
    L.push(table(['adapter', 'run', 'conc.', 'req/s', 'p50 ms', 'p99 ms', 'service cores', 'service ELU', 'client cores', 'req/s per service core', '÷ in-process q/s per core', 'service CPU µs/req', 'errors'], pinned.map((r) => [
      r.adapter, `search ${r.format}`, String(r.concurrency), f0(r.result.rps), f3(r.result.p50), f3(r.result.p99), f2(r.serverCores), f2(r.elu), f2(r.result.clientCores),
      f0(r.result.rps / r.serverCores), pct(r.result.rps / r.serverCores / (ref.qps / ref.cores)), f0(cpuUs(r)), String(r.result.errors),
    ]), 2));
    L.push('');
  }
  if (rep.profiles.length) {
    L.push('## Where the service\'s CPU goes (perf)');
    L.push('');
    L.push('Linux `perf record -e cpu-clock -g` on the service process (every thread) during a concurrency-16 window, a process per adapter and format; the service ran with `--perf-basic-prof --interpreted-frames-native-stack` so JIT frames carry names. perf samples a thread only while it runs on a CPU. Each sample\'s call chain is read from the leaf up and charged to the first step it is inside (bench/http/perf.ts names each step\'s functions); samples inside no step go by the library they are in. Inlining by the JIT can move a small function\'s time into its caller\'s step. µs per request = sampled CPU time ÷ requests answered in the window.');
    L.push('');
    for (const prof of rep.profiles) {
      const run = rep.runs.find((r) => r.group === 'profile' && r.adapter === prof.adapter && r.format === prof.format);
      const total = prof.steps.reduce((x, st) => x + st.mainUs + st.otherUs, 0);
      L.push(`### ${prof.adapter}, search ${prof.format}, concurrency 16`);
      L.push('');
      L.push(`${prof.requests.toLocaleString('en-US')} requests in the window; ${prof.samples.main.toLocaleString('en-US')} samples on the main thread, ${prof.samples.other.toLocaleString('en-US')} on the others; sampled ${f0(total)} µs/request against ${run ? f0(cpuUs(run)) : '-'} µs/request from /proc in the same window.`);
      L.push('');
      L.push(table(['step', 'main thread µs/req', 'other threads µs/req', 'total µs/req', 'share'], prof.steps.map((st) => [st.step, f1(st.mainUs), f1(st.otherUs), f1(st.mainUs + st.otherUs), pct((st.mainUs + st.otherUs) / total)])));
      L.push('');
      L.push('<details><summary>Main thread by innermost JS function (with the native code it called), and busiest leaf functions</summary>');
      L.push('');
      L.push(table(['innermost JS function', 'µs/request'], (prof.js ?? []).map((l) => [l.name.replaceAll('|', '\\|'), f1(l.us)])));
      L.push('');
      L.push(table(['function (self time)', 'µs/request'], prof.leaves.map((l) => [l.name.replaceAll('|', '\\|'), f1(l.us)])));
      L.push('');
      L.push('</details>');
      L.push('');
    }
  }
  L.push('## Results');
  L.push('');
  L.push(table(MAIN_HEAD, mainRows(rep), 2));
  L.push('');
  L.push('"in-process CPU ÷ server CPU": the in-process CPU per query divided by the service\'s CPU per request: the share of the service\'s CPU that is the search itself, which other load on the machine disturbs much less than throughput. "server cores": CPU of the whole service process (all its threads) over the window; "server ELU": event-loop utilisation of its main thread (1 = the JS thread never idles); "client cores": the load generator; "other load cores": every other process on the machine (other engineers\' builds and tests), from /proc/stat. On 2 cores, server + client + other cannot exceed 2.');
  L.push('');
  L.push('Server CPU by thread (cores; Node names all its threads "node", so "workers" are the service\'s busiest non-main threads, as many as it has search threads, and "other threads" the rest: GC helpers, libuv, LMDB):');
  L.push('');
  L.push(table(['adapter', 'run', 'conc.', 'threads'], rep.runs.filter((r) => r.group === 'search' || r.group === 'bare').map((r) => [r.adapter, runName(r), String(r.concurrency), threadSplit(r)]), ['l', 'l', 'r', 'l']));
  L.push('');
  L.push('### In-process `searchBatch`');
  L.push('');
  L.push(table(['run', 'threads', 'metadata', 'q/s', 'passes', 'process cores', 'CPU µs/query', 'other load cores'], rep.inProcess.map((b) => [b.label, String(b.threads), b.includeMetadata ? 'yes' : 'no', f0(b.qps), String(b.passes), f2(b.cores), f0((b.cores / b.qps) * 1e6), f2(b.otherCores)])));
  L.push('');
  L.push(`Built in-process: ${rep.inProcessBuild.vectors.toLocaleString('en-US')} vectors upserted in ${f1(rep.inProcessBuild.upsertSeconds)} s, flush (seal + index) ${f1(rep.inProcessBuild.flushSeconds)} s, ${rep.inProcessBuild.partitions} partition.`);
  L.push('');
  L.push('### Insert over HTTP');
  L.push('');
  const ins = rep.insert;
  L.push(table(['vectors', 'requests', 'seconds', 'vectors/s', 'MB/s (body)', 'p50 ms/request', 'p99 ms/request', 'client cores', 'seal + index s'], [[
    ins.vectors.toLocaleString('en-US'), String(ins.requests), f1(ins.seconds), f0(ins.vectors / ins.seconds), f1(ins.bodyBytes / 1e6 / ins.seconds), f1(ins.p50), f1(ins.p99), f2(ins.clientCores), f1(ins.sealSeconds),
  ]]));
  L.push('');
  L.push(`Through ${ins.adapter}: msgpack bodies of ${p.insertBatch} vectors (float32 binaries), ${p.insertConcurrency} requests in flight; promotion policy \`max_buffer_vectors: 200000\` while loading, then \`max_buffer_age_ms: 1\` sealed the one growing partition; "seal + index" is from that PUT until GET /index said ready with ${ins.partitions} partition and ${ins.vectorCount.toLocaleString('en-US')} vectors.`);
  L.push('');
  if (rep.diag) {
    L.push('## Diagnosis');
    L.push('');
    const diagRuns = rep.runs.filter((r) => r.group === 'diag');
    if (diagRuns.length) {
      L.push(`HTTP runs of ${p.diagDurationMs / 1000} s each:`);
      L.push('');
      L.push(table(['adapter', 'run', 'client', 'conc.', 'req/s', 'p50 ms', 'p99 ms', 'server cores', 'server ELU', 'client cores', 'other cores', 'server CPU µs/req', 'client CPU µs/req', 'req bytes', 'errors'], diagRuns.map((r) => [
        r.adapter, r.label, r.client, String(r.concurrency), f0(r.result.rps), f3(r.result.p50), f3(r.result.p99), f2(r.serverCores), f2(r.elu), f2(r.result.clientCores), f2(r.otherCores),
        f0(cpuUs(r)), f0(perRequestUs(r, r.result.clientCores)), f0(r.result.requestBytes), String(r.result.errors),
      ]), 3));
      L.push('');
    }
    const search = rep.runs.filter((r) => r.group === 'search' || (r.group === 'diag' && r.format !== null && r.label.startsWith('search')));
    if (search.length) {
      const per = (r: RunRecord, cores: number) => f0(perRequestUs(r, cores));
      const th = (r: RunRecord, k: string) => r.serverThreads[k] ?? 0;
      const sy = (r: RunRecord, k: string) => r.serverThreadsSys[k] ?? 0;
      L.push('Where a search request\'s time and CPU go (CPU from /proc per thread, µs per request, "(sys)" the kernel part; handler and pool times are the server\'s own figures, means of every 16th response):');
      L.push('');
      L.push(table(['adapter', 'run', 'conc.', 'client p50 ms', 'client mean ms', 'handler ms (query_time_ms)', 'pool ms (receipt.elapsed_us)', 'main thread µs/req (sys)', 'workers µs/req (sys)', 'other threads µs/req', 'client µs/req (sys)'], search.map((r) => [
        r.adapter, r.label, String(r.concurrency), f3(r.result.p50), f3(r.result.mean), f3(r.result.serverQueryMs ?? NaN), f3(r.result.poolElapsedMs ?? NaN),
        `${per(r, th(r, 'main'))} (${per(r, sy(r, 'main'))})`, `${per(r, th(r, 'workers'))} (${per(r, sy(r, 'workers'))})`, per(r, th(r, 'other threads') + th(r, 'threads that ended')),
        `${per(r, r.result.clientCores)} (${per(r, r.result.clientSysCores)})`,
      ]), 2));
      L.push('');
    }
    if (rep.diag.pool.length || rep.diag.batchNoMetadata) {
      L.push('The search path without HTTP, in the benchmark process (same dataset, same queries):');
      L.push('');
      const us = (cores: number, qps: number) => f0((cores / qps) * 1e6);
      const rows: string[][] = rep.inProcess.map((b) => [`searchBatch threads ${b.threads}, metadata (${b.label})`, '-', f0(b.qps), '-', '-', us(b.cores, b.qps), '-', f2(b.otherCores)]);
      const b = rep.diag.batchNoMetadata;
      if (b) rows.push([`searchBatch threads ${b.threads}, no metadata`, '-', f0(b.qps), '-', '-', us(b.cores, b.qps), '-', f2(b.otherCores)]);
      rows.push(...rep.diag.pool.map((r) => [r.label, String(r.concurrency), f0(r.qps), f3(r.p50), f3(r.p99), us(r.cores, r.qps), `${us(r.mainCores, r.qps)} (${us(r.mainSysCores, r.qps)})`, f2(r.otherCores)]));
      L.push(table(['path', 'conc.', 'q/s', 'p50 ms', 'p99 ms', 'process CPU µs/query', 'main thread µs/query (sys)', 'other cores'], rows));
      L.push('');
    }
    if (rep.diag.steps.length) {
      L.push('Per-request costs of the service\'s main-thread steps, one thread, on the service\'s own modules (CPU time per operation):');
      L.push('');
      L.push(table(['step', 'µs/request', 'note'], rep.diag.steps.map((s) => [s.step, f1(s.us), s.note]), ['l', 'r', 'l']));
      L.push('');
    }
  }
  if (rep.notes.length) {
    L.push('## Notes');
    L.push('');
    for (const n of rep.notes) L.push(`- ${n}`);
    L.push('');
  }
  return L.join('\n');
}

function clientText(c: ClientKind): string {
  if (c === 'net') return 'raw HTTP/1.1 over keep-alive node:net sockets, one prebuilt buffer per request';
  if (c === 'http') return 'node:http with a keep-alive Agent';
  return 'global fetch';
}
