// Options of the soak harness, its modes and the flags of `npm run bench:soak`.

export const OPS = ['search', 'upsert', 'delete', 'read', 'status'] as const;
export type OpKind = (typeof OPS)[number];

export interface SoakOptions {
  /** full (the record), quick, custom (full with a size or duration changed), test. */
  mode: 'full' | 'quick' | 'custom' | 'test';
  /** Vectors loaded before the soak (ids 0..n-1, never deleted). */
  n: number;
  dim: number;
  /** Closed-loop clients, one keep-alive connection each. */
  clients: number;
  seconds: number;
  bucketSeconds: number;
  /** The first part of the run left out of the RSS fit. */
  warmupFraction: number;
  /** Relative weights of the operations. */
  mix: Record<OpKind, number>;
  /** Vectors per upsert request and ids per delete request. */
  upsertBatch: number;
  deleteBatch: number;
  /** Ids n..n+churn-1 are the ones deletes target (upserts also replace 0..n-1). */
  churn: number;
  topK: number;
  /** Every fourth search carries this range filter on the `year` column (20 % of rows pass). */
  filterEvery: number;
  /** A new ingestion job every this many seconds (0: only the one made during setup). */
  ingestEverySeconds: number;
  /** The service's search threads (`sable serve --search-threads`). */
  searchThreads: number;
  /** /proc sampling period of the service (RSS, CPU). */
  sampleMs: number;
  /** RSS is called flat when the slope after warm-up is under this. */
  flatMBPerMin: number;
  seed: number;
}

export const DEFAULT_MIX: Record<OpKind, number> = { search: 70, upsert: 10, delete: 5, read: 10, status: 5 };

const base = {
  dim: 768,
  clients: 64,
  warmupFraction: 0.2,
  mix: DEFAULT_MIX,
  upsertBatch: 10,
  deleteBatch: 20,
  topK: 10,
  filterEvery: 4,
  searchThreads: 2,
  sampleMs: 1000,
  flatMBPerMin: 1,
  seed: 17,
};

export function fullOptions(): SoakOptions {
  return { ...base, mode: 'full', n: 100_000, churn: 20_000, seconds: 600, bucketSeconds: 10, ingestEverySeconds: 30 };
}

export function quickOptions(): SoakOptions {
  return { ...base, mode: 'quick', n: 100_000, churn: 20_000, seconds: 60, bucketSeconds: 5, ingestEverySeconds: 10 };
}

export const HELP = `npm run bench:soak [-- flags]

  (no flag)       the record: 64 clients for 10 min on 100k x 768 (cosine), 10 s buckets;
                  writes bench/results/soak.md, soak.svg and soak.json
  --quick         1 min, 5 s buckets; writes bench/.cache/soak-quick.{md,svg,json}
  --seconds=N     run for N seconds (a full run so changed writes bench/.cache/soak-custom.*)
  --n=N --dim=D   vectors loaded and their dimension (D <= 768: the first D coordinates of the
                  synthetic generator's vectors)
  --clients=C     closed-loop clients (default 64)
  --bucket=S      seconds per time bucket
  --mix=search:70,upsert:10,delete:5,read:10,status:5   operation weights
  --test          the short run test/project/soak.test.ts makes: 16 clients for 12 s on 5k x 64, 2 s
                  buckets, an ingestion job every 3 s
  --out=DIR       write soak-<mode>.{md,svg,json} into DIR
  --render=FILE   rewrite FILE's .md and .svg from FILE (a soak.json) without measuring
  --help
`;

export type Plan = { kind: 'help' } | { kind: 'render'; file: string } | { kind: 'run'; options: SoakOptions; out?: string };

const FLAGS = ['help', 'render', 'quick', 'test', 'out', 'seconds', 'n', 'dim', 'clients', 'bucket', 'mix'];

/** The short run the test suite makes (test/project/soak.test.ts), every operation and the feeder included. */
export function testOptions(): SoakOptions {
  return { ...quickOptions(), mode: 'test', n: 5000, dim: 64, churn: 1000, clients: 16, seconds: 12, bucketSeconds: 2, ingestEverySeconds: 3, sampleMs: 500 };
}

export function parsePlan(argv: string[]): Plan {
  const flags: Record<string, string> = {};
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    // A mistyped flag must not start the 10-minute record run.
    if (!m || !FLAGS.includes(m[1]!)) throw new Error(`unknown argument ${a}`);
    flags[m[1]!] = m[2] ?? 'true';
  }
  if (flags.help) return { kind: 'help' };
  if (flags.render) return { kind: 'render', file: flags.render };
  const o = flags.test ? testOptions() : flags.quick ? quickOptions() : fullOptions();
  const int = (name: string, min: number, max: number): number | undefined => {
    if (flags[name] === undefined) return undefined;
    const v = Number(flags[name]);
    if (!Number.isInteger(v) || v < min || v > max) throw new Error(`--${name} must be an integer in [${min}, ${max}]`);
    return v;
  };
  const changed = (v: number | undefined, apply: (v: number) => void) => {
    if (v === undefined) return;
    apply(v);
    if (o.mode === 'full') o.mode = 'custom';
  };
  changed(int('seconds', 5, 24 * 3600), (v) => (o.seconds = v));
  changed(int('n', 100, 10_000_000), (v) => {
    o.n = v;
    o.churn = Math.max(100, Math.round(v / 5));
  });
  changed(int('dim', 2, 768), (v) => (o.dim = v));
  changed(int('clients', 1, 1024), (v) => (o.clients = v));
  changed(int('bucket', 1, 600), (v) => (o.bucketSeconds = v));
  if (flags.mix) {
    const mix = { search: 0, upsert: 0, delete: 0, read: 0, status: 0 } as Record<OpKind, number>;
    for (const part of flags.mix.split(',')) {
      const [k, v] = part.split(':');
      if (!(OPS as readonly string[]).includes(k!) || !(Number(v) >= 0)) throw new Error(`--mix: bad entry ${part}`);
      mix[k as OpKind] = Number(v);
    }
    if (OPS.every((k) => mix[k] === 0)) throw new Error('--mix: every weight is 0');
    o.mix = mix;
    if (o.mode === 'full') o.mode = 'custom';
  }
  return { kind: 'run', options: o, ...(flags.out ? { out: flags.out } : {}) };
}
