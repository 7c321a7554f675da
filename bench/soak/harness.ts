// The soak itself, callable from the runner (run.ts) and from the test suite: `sable serve` in
// its own process on a fresh data directory (bench/service.ts), a dataset filled through the
// insert route, an ingestion source fed during the run, closed-loop clients in this process,
// /proc sampling of the service; returns every figure (SoakResult), writes nothing.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { loadAverage } from '../http/procstat.js';
import { callerOf, serve, type Served } from '../service.js';
import { runClients } from './clients.js';
import { OPS, type OpKind, type SoakOptions } from './config.js';
import { soakData } from './data.js';
import { IngestFeeder, type FeederStats } from './ingest.js';
import { loadDataset, type LoadFigures } from './load.js';
import { Monitor, statusField, type Sample } from './monitor.js';
import { OpMaker, SCHEMA } from './ops.js';
import { fitLine, Recorder, type LineFit, type OpStats } from './series.js';

export interface DatasetState {
  vector_count: number;
  deleted_count: number;
  partitions: number;
  memory_bytes: number;
  index_status: string;
}

export interface BucketRow {
  /** Seconds since the start: [from, to). */
  from: number;
  to: number;
  ops: Record<OpKind, OpStats>;
  rssMB: number;
  rssMaxMB: number;
  anonMB: number;
  fileMB: number;
  serviceCores: number;
  machineCores: number;
  clientCores: number;
  /** GET /datasets/{id}/stats at the bucket's end (null when that call failed). */
  dataset: DatasetState | null;
}

export interface RssVerdict {
  warmupSeconds: number;
  /** Mean of the first and last five samples after warm-up. */
  startMB: number;
  endMB: number;
  minMB: number;
  maxMB: number;
  /** Least squares over every sample after warm-up. */
  fit: LineFit;
  slopeMBPerMin: number;
  /** The same over the second half of that window (a slope that fades is warm-up, not a leak). */
  lateSlopeMBPerMin: number;
  /** slope × the fitted window. */
  growthMB: number;
  thresholdMBPerMin: number;
  flat: boolean;
  /** The slopes of RSS's two parts: anonymous memory and mapped files (LMDB's pages). */
  anonSlopeMBPerMin: number;
  fileSlopeMBPerMin: number;
  /**
   * Anonymous memory split at the bucket ends after warm-up: the dataset's own memory (GET
   * /stats memory_bytes: its partitions' vectors and indexes, dead rows included until a
   * compaction) and the rest (JS heap, buffers, allocator). Growth of the first is data the
   * service holds; growth of the second is memory held per request or per job: a leak.
   */
  datasetSlopeMBPerMin: number;
  restSlopeMBPerMin: number;
  restFlat: boolean;
}

export interface SoakResult {
  options: SoakOptions;
  startedAt: string;
  finishedAt: string;
  commit: string;
  cpu: { model: string; cores: number; simd: string[] };
  node: string;
  loadStart: number[];
  loadEnd: number[];
  health: { adapter: string; isa: string };
  data: { n: number; dim: number; nq: number; source: string };
  load: LoadFigures;
  rssAfterSetupMB: number;
  hwmMB: number;
  seconds: number;
  buckets: BucketRow[];
  total: Record<OpKind, OpStats>;
  /** Answered per second, per operation, over the whole run. */
  throughput: Record<OpKind, number>;
  samples: Sample[];
  rss: RssVerdict;
  feeder: FeederStats;
  requests: number;
  reconnects: number;
  errorsTotal: number;
  errorExamples: Record<string, string>;
  /** The load generator's event loop: how late its timers ran (ms); a busy client shows here. */
  clientLoopDelay: { p50: number; p99: number; max: number };
  datasetEnd: DatasetState | null;
  notes: string[];
}

export interface SoakHooks {
  log?: (msg: string) => void;
  /** The service as soon as it runs, so a runner stopped by a signal can end it. */
  onService?: (s: Served) => void;
}

const LOOP_RESOLUTION_MS = 10;

export async function runSoak(o: SoakOptions, hooks: SoakHooks = {}): Promise<SoakResult> {
  const log = hooks.log ?? (() => undefined);
  const startedAt = new Date().toISOString();
  const loadStart = loadAverage();
  const notes: string[] = [];
  const nq = Math.min(1000, Math.max(100, o.n));
  const data = soakData(o.n, nq, o.dim);
  log(`data: ${o.n} x ${o.dim} + ${nq} queries (${data.source})`);

  const served = await serve('sable-soak-', ['--search-threads', String(o.searchThreads)]);
  hooks.onService?.(served);
  let gone = false;
  let stopping = false;
  served.child.once('exit', (code, signal) => {
    gone = true;
    if (!stopping) notes.push(`the service exited during the run (code ${code}, signal ${signal})`);
  });
  let feeder: IngestFeeder | undefined;
  const monitor = new Monitor(served.child.pid!, o.sampleMs);
  let statsTimer: NodeJS.Timeout | undefined;
  try {
    const url = new URL(served.url);
    const host = url.hostname;
    const port = Number(url.port);
    const api = callerOf(served);
    const health = await api('GET', '/healthz');
    log(`service up at ${served.url} (pid ${served.child.pid}, adapter ${health.adapter}, ISA ${health.isa})`);
    const ds = await api('POST', '/datasets', { name: 'soak', dim: o.dim, metric: 'cosine', schema: SCHEMA });
    await api('POST', `/datasets/${ds.id}/ensure-engine`);
    const load = await loadDataset(api, host, port, served.key, ds.id, data);
    log(`loaded ${o.n} vectors in ${load.insertSeconds.toFixed(1)} s (${Math.round(load.vectorsPerSecond)}/s), sealed in ${load.sealSeconds.toFixed(1)} s; promotion policy ${JSON.stringify(load.policy)}`);
    feeder = await IngestFeeder.setup(served.url, served.key);
    log(`ingestion source ${feeder.sourceId} -> dataset ${feeder.datasetId}: first job ${feeder.jobId} completed`);
    const rssAfterSetupMB = statusField(served.child.pid!, 'VmRSS');

    const durationMs = o.seconds * 1000;
    const recorder = new Recorder(o.bucketSeconds * 1000, durationMs);
    const datasetStates: (DatasetState | null)[] = new Array(recorder.buckets).fill(null);
    const stateOf = async (): Promise<DatasetState | null> => {
      try {
        const s = await api('GET', `/datasets/${ds.id}/stats`);
        return { vector_count: s.vector_count, deleted_count: s.deleted_count, partitions: s.partitions, memory_bytes: s.memory_bytes, index_status: s.index_status };
      } catch {
        return null;
      }
    };
    const f = feeder;
    const maker = new OpMaker({ host, port, key: served.key, datasetId: ds.id, docsDatasetId: f.datasetId, sourceId: f.sourceId, jobId: () => f.jobId }, data, o);
    const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    loopDelay.enable();
    const t0 = performance.now();
    monitor.start(t0);
    let statsBucket = 0;
    statsTimer = setInterval(() => {
      const b = statsBucket++;
      if (b < recorder.buckets) void stateOf().then((s) => (datasetStates[b] = s));
      const last = monitor.samples.at(-1);
      const mine = recorder.bucket(Math.min(b, recorder.buckets - 1));
      const ops = OPS.map((k) => `${k} ${mine[k].ok}${mine[k].errors ? `/${mine[k].errors} err` : ''}`).join(', ');
      log(`${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s  ${ops}  search p99 ${mine.search.p99.toFixed(1)} ms  RSS ${last?.rssMB.toFixed(0)} MB  service ${last?.serviceCores.toFixed(2)} cores`);
    }, o.bucketSeconds * 1000);
    f.start(o.ingestEverySeconds * 1000);
    const clients = await runClients({ maker, host, port, clients: o.clients, seed: o.seed, t0, durationMs, recorder, serviceGone: () => gone });
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(statsTimer);
    loopDelay.disable();
    await f.stop();
    monitor.stop();
    const datasetEnd = await stateOf();
    if (datasetStates[recorder.buckets - 1] === null) datasetStates[recorder.buckets - 1] = datasetEnd;
    const hwmMB = statusField(served.child.pid!, 'VmHWM');

    const buckets: BucketRow[] = [];
    for (let b = 0; b < recorder.buckets; b++) {
      const from = b * o.bucketSeconds;
      const to = Math.min(o.seconds, from + o.bucketSeconds);
      // The last sample lands after the drain; it belongs to the last bucket.
      const ss = monitor.samples.filter((s) => s.t > from && (s.t <= to || b === recorder.buckets - 1));
      const avg = (k: keyof Sample) => (ss.length ? ss.reduce((s, x) => s + x[k], 0) / ss.length : NaN);
      buckets.push({
        from,
        to,
        ops: recorder.bucket(b),
        rssMB: avg('rssMB'),
        rssMaxMB: ss.length ? Math.max(...ss.map((s) => s.rssMB)) : NaN,
        anonMB: avg('anonMB'),
        fileMB: avg('fileMB'),
        serviceCores: avg('serviceCores'),
        machineCores: avg('machineCores'),
        clientCores: avg('clientCores'),
        dataset: datasetStates[b] ?? null,
      });
    }
    const total = recorder.total();
    const throughput = Object.fromEntries(OPS.map((k) => [k, total[k].ok / seconds])) as Record<OpKind, number>;
    const rss = rssVerdict(monitor.samples, o, buckets);
    const opErrors = OPS.reduce((s, k) => s + total[k].errors, 0);
    const errorExamples = { ...clients.examples };
    for (const [k, v] of Object.entries(f.stats.codes)) errorExamples[`${k} (ingestion feeder)`] = `${v} time(s)`;
    // A service that died mid-run is the worst error of all; the figures up to then still count.
    const died = gone ? 1 : 0;
    if (died) errorExamples['the service process exited'] = notes.join('; ');
    return {
      options: o,
      startedAt,
      finishedAt: new Date().toISOString(),
      commit: gitCommit(),
      cpu: cpuInfo(),
      node: process.version,
      loadStart,
      loadEnd: loadAverage(),
      health: { adapter: health.adapter, isa: health.isa },
      data: { n: o.n, dim: o.dim, nq, source: data.source },
      load,
      rssAfterSetupMB,
      hwmMB,
      seconds,
      buckets,
      total,
      throughput,
      samples: monitor.samples,
      rss,
      feeder: f.stats,
      requests: clients.requests,
      reconnects: clients.reconnects,
      errorsTotal: opErrors + f.stats.errors + died,
      errorExamples,
      // The histogram times a timer of `resolution` ms: what is over it is lateness.
      clientLoopDelay: {
        p50: Math.max(0, loopDelay.percentile(50) / 1e6 - LOOP_RESOLUTION_MS),
        p99: Math.max(0, loopDelay.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
        max: Math.max(0, loopDelay.max / 1e6 - LOOP_RESOLUTION_MS),
      },
      datasetEnd,
      notes,
    };
  } finally {
    if (statsTimer) clearInterval(statsTimer);
    monitor.stop();
    await feeder?.stop().catch(() => undefined);
    stopping = true;
    await served.stop();
  }
}

export function rssVerdict(samples: Sample[], o: SoakOptions, buckets: BucketRow[]): RssVerdict {
  const warmupSeconds = o.seconds * o.warmupFraction;
  const after = samples.filter((s) => s.t >= warmupSeconds && Number.isFinite(s.rssMB));
  const fit = fitLine(
    after.map((s) => s.t),
    after.map((s) => s.rssMB),
  );
  const lateFrom = (warmupSeconds + (after.at(-1)?.t ?? o.seconds)) / 2;
  const late = after.filter((s) => s.t >= lateFrom);
  const lateFit = fitLine(
    late.map((s) => s.t),
    late.map((s) => s.rssMB),
  );
  const mean = (xs: Sample[]) => xs.reduce((s, x) => s + x.rssMB, 0) / xs.length;
  const span = after.length > 1 ? after.at(-1)!.t - after[0]!.t : 0;
  const slopeMBPerMin = fit.slope * 60;
  const ends = buckets
    .filter((b) => b.to > warmupSeconds && b.dataset)
    .map((b) => {
      // The last RSS sample of the bucket, beside the dataset's memory read at its end.
      const at = [...samples].reverse().find((s) => s.t <= b.to + 0.5) ?? samples.at(-1);
      return { t: b.to, anon: at?.anonMB ?? NaN, data: b.dataset!.memory_bytes / 2 ** 20 };
    })
    .filter((x) => Number.isFinite(x.anon));
  const dataFit = fitLine(
    ends.map((x) => x.t),
    ends.map((x) => x.data),
  );
  const restFit = fitLine(
    ends.map((x) => x.t),
    ends.map((x) => x.anon - x.data),
  );
  const slopeOf = (k: 'anonMB' | 'fileMB') =>
    fitLine(
      after.map((s) => s.t),
      after.map((s) => s[k]),
    ).slope * 60;
  return {
    warmupSeconds,
    startMB: after.length ? mean(after.slice(0, 5)) : NaN,
    endMB: after.length ? mean(after.slice(-5)) : NaN,
    minMB: after.length ? Math.min(...after.map((s) => s.rssMB)) : NaN,
    maxMB: after.length ? Math.max(...after.map((s) => s.rssMB)) : NaN,
    fit,
    slopeMBPerMin,
    lateSlopeMBPerMin: lateFit.slope * 60,
    growthMB: fit.slope * span,
    thresholdMBPerMin: o.flatMBPerMin,
    flat: Number.isFinite(slopeMBPerMin) && slopeMBPerMin < o.flatMBPerMin,
    anonSlopeMBPerMin: slopeOf('anonMB'),
    fileSlopeMBPerMin: slopeOf('fileMB'),
    datasetSlopeMBPerMin: dataFit.slope * 60,
    restSlopeMBPerMin: restFit.slope * 60,
    restFlat: Number.isFinite(restFit.slope) && restFit.slope * 60 < o.flatMBPerMin,
  };
}
