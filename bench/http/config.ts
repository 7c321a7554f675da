// Flags of `npm run bench:http` and the plans of its two modes.

export type Format = 'json' | 'msgpack';
export type ClientKind = 'net' | 'http' | 'fetch';
/** The service's HTTP adapters, as its --http-adapter names them. */
export type AdapterKey = 'uws' | 'node';
/** Node major whose full run is the record (bench/results/http.*); other majors write http-node<major>. */
const RECORD_NODE_MAJOR = 20;

export interface Plan {
  mode: 'full' | 'quick';
  /** Vectors loaded (100k full, 20k quick). */
  n: number;
  dim: number;
  /** Distinct queries, cycled by the load generator and batched in-process. */
  nq: number;
  topK: number;
  concurrency: number[];
  formats: Format[];
  /** Fixed measuring window of each run, after its warm-up (ms). */
  durationMs: number;
  warmupMs: number;
  /** Window of the diagnosis runs (ms). */
  diagDurationMs: number;
  /** The service's search threads, and the in-process searchBatch threads. */
  threads: number;
  /** The adapters measured: the ones named (each must serve on this Node), or every one that does. */
  adapters: AdapterKey[] | 'all';
  client: ClientKind;
  /** Vectors per msgpack insert request, and insert requests in flight. */
  insertBatch: number;
  insertConcurrency: number;
  diagnose: boolean;
  /** perf profile of the service at concurrency 16, per adapter and format. */
  profile: boolean;
  /** Runs with the service and the load generator pinned to a core each. */
  pin: boolean;
  /** The load generator stops a run after this many requests even inside the window. */
  maxRequestsPerRun: number;
  /** The file name of md/json: http (the record), http-node<major>, http-quick or http-custom. */
  outName: string;
  /** Whether they go to bench/results (a full run) or bench/.cache (quick, custom). */
  record: boolean;
}

export const HELP = `npm run bench:http [-- flags]

  (no flag)          full mode, the record: 100k x 768 vectors, 10 s per measurement, every
                     adapter that serves on this Node; writes bench/results/http.md / .json on
                     Node ${RECORD_NODE_MAJOR}, bench/results/http-node<major>.md / .json on any other Node
  --quick            20k vectors, 3 s per measurement (development); writes
                     bench/.cache/http-quick.md / .json instead of the record
  --n=N              vectors to load (overrides the mode's size)
  --duration=S       seconds per measured run        --warmup=S   seconds of warm-up per run
  --concurrency=1,16,64                              --formats=json,msgpack
  --adapters=uws,node       the service's HTTP adapters to measure (default: every one that
                     serves on this Node; uWS only where its native binary loads)
  --adapter=uws|node        one adapter (the same as --adapters=X)
  --client=net|http|fetch   the load generator's client (default net: raw HTTP/1.1 keep-alive
                     sockets on node:net; http = node:http Agent keep-alive; fetch = global fetch)
  --no-diagnose      skip the diagnosis runs (bare POST, client comparison, one search thread,
                     worker hop, per-request costs)
  --no-profile       skip the perf profiles of the service (where its CPU goes, by step)
  --no-pin           skip the runs with the service and the load generator on a core each
  --render=FILE      rewrite FILE's .md from FILE (an http.json) without measuring
  --help
`;

function parseFlags(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of argv) {
    if (!a.startsWith('--')) throw new Error(`unexpected argument '${a}' (see --help)`);
    const eq = a.indexOf('=');
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else out[a.slice(2)] = 'true';
  }
  return out;
}

function num(name: string, raw: string, min: number, max: number): number {
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min || v > max) throw new Error(`--${name} must be a number from ${min} to ${max} (got '${raw}')`);
  return v;
}

const KNOWN = new Set(['render', 'quick', 'n', 'duration', 'warmup', 'concurrency', 'formats', 'adapters', 'adapter', 'client', 'no-diagnose', 'no-profile', 'no-pin', 'help']);

export function parsePlan(argv: string[]): Plan | 'help' | { render: string } {
  const f = parseFlags(argv);
  if (f.help) return 'help';
  if (f.render) return { render: f.render };
  for (const k of Object.keys(f)) if (!KNOWN.has(k)) throw new Error(`unknown flag --${k} (see --help)`);
  const quick = f.quick === 'true';
  const plan: Plan = {
    mode: quick ? 'quick' : 'full',
    n: quick ? 20_000 : 100_000,
    dim: 768,
    nq: 1000,
    topK: 10,
    concurrency: [1, 16, 64],
    formats: ['json', 'msgpack'],
    durationMs: quick ? 3000 : 10_000,
    warmupMs: quick ? 1000 : 2000,
    diagDurationMs: quick ? 2000 : 5000,
    threads: 2,
    adapters: 'all',
    client: 'net',
    insertBatch: 1000,
    insertConcurrency: 2,
    diagnose: f['no-diagnose'] !== 'true',
    profile: f['no-profile'] !== 'true',
    pin: f['no-pin'] !== 'true',
    maxRequestsPerRun: 2_000_000,
    outName: quick ? 'http-quick' : recordName(),
    record: !quick,
  };
  if (f.n) plan.n = Math.round(num('n', f.n, 1000, 10_000_000));
  if (f.duration) plan.durationMs = Math.round(num('duration', f.duration, 0.5, 600) * 1000);
  if (f.warmup) plan.warmupMs = Math.round(num('warmup', f.warmup, 0, 600) * 1000);
  if (f.concurrency) plan.concurrency = f.concurrency.split(',').map((c) => Math.round(num('concurrency', c, 1, 1024)));
  if (f.formats) {
    plan.formats = f.formats.split(',') as Format[];
    for (const x of plan.formats) if (x !== 'json' && x !== 'msgpack') throw new Error(`--formats takes json and msgpack (got '${x}')`);
  }
  if (f.adapters && f.adapter) throw new Error('--adapter and --adapters: give one of them');
  const adapters = f.adapters ?? f.adapter;
  if (adapters) {
    plan.adapters = [...new Set(adapters.split(','))] as AdapterKey[];
    for (const a of plan.adapters) if (a !== 'uws' && a !== 'node') throw new Error(`--adapters takes uws and node (got '${a}'; the default is every adapter that serves here)`);
  }
  if (f.client) {
    if (!['net', 'http', 'fetch'].includes(f.client)) throw new Error(`--client must be net, http or fetch`);
    plan.client = f.client as ClientKind;
  }
  // A run that is not the record (size, windows or adapters chosen) never overwrites it.
  if (!quick && (f.n || f.duration || f.warmup || f.concurrency || f.formats || adapters)) {
    plan.outName = 'http-custom';
    plan.record = false;
  }
  return plan;
}

/** A full run's file name: the record on its Node major, the Node major in the name on any other. */
function recordName(): string {
  const major = Number(process.versions.node.split('.')[0]);
  return major === RECORD_NODE_MAJOR ? 'http' : `http-node${major}`;
}
