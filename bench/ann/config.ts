// The benchmark's plan: which data sets at which sizes, which libraries, which build settings and
// which search sweeps. Quick mode (the default) keeps the whole run under about five minutes on
// two cores; --full measures the whole sets with denser sweeps and more build settings.
// bench:ann:matrix has a plan of its own (parseMatrixArgs): sizes x loading patterns.
import { LOAD_PATTERNS, type LoadPattern } from './libs/types.js';

export type SetName = 'glove' | 'mnist' | 'synthetic' | 'debian-minilm';
export const ALL_SETS: readonly SetName[] = ['glove', 'mnist', 'synthetic', 'debian-minilm'];
/** Run when --sets is not given: every set (debian-minilm's first build embeds 121,000
 * sentences, about ten minutes of both cores; later runs read its cache). */
const DEFAULT_SETS: readonly SetName[] = ALL_SETS;

export type LibName =
  | 'sable'
  | 'sable-hnsw'
  | 'sable-ivf'
  | 'sable-flat'
  | 'hnswlib'
  | 'usearch'
  | 'lancedb'
  | 'lancedb-hnsw'
  | 'faiss-hnsw'
  | 'faiss-ivf'
  | 'faiss-flat';

export const SABLE_LIBS: readonly LibName[] = ['sable', 'sable-hnsw', 'sable-ivf', 'sable-flat'];
export const PEER_LIBS: readonly LibName[] = ['hnswlib', 'usearch', 'lancedb', 'lancedb-hnsw', 'faiss-hnsw', 'faiss-ivf', 'faiss-flat'];
export const ALL_LIBS: readonly LibName[] = [...SABLE_LIBS, ...PEER_LIBS];

/** Group names accepted by --only / --skip besides the library names. */
const GROUPS: Record<string, readonly LibName[]> = {
  'sable-all': SABLE_LIBS,
  hnswlib: ['hnswlib'],
  usearch: ['usearch'],
  'lancedb-all': ['lancedb', 'lancedb-hnsw'],
  faiss: ['faiss-hnsw', 'faiss-ivf', 'faiss-flat'],
  peers: PEER_LIBS,
};

export interface HnswBuild {
  m: number;
  efConstruction: number;
}

export interface Plan {
  mode: 'quick' | 'full';
  sets: SetName[];
  libs: LibName[];
  /** Vectors indexed per set. */
  sizes: Record<SetName, number>;
  queries: number;
  k: number;
  hnswBuilds: HnswBuild[];
  /** IVF list count as a function of the indexed count. */
  nlist: (n: number) => number;
  efSweep: number[];
  nprobeSweep: number[];
  /** A sweep stops once recall@k reaches this (higher settings only cost time). */
  stopRecall: number;
  /** A sweep stops after a setting whose one-thread pass over all queries took longer than this. */
  maxSecondsPerSetting: number;
  /** Selectivities of the filtered cases (fraction of the indexed vectors that pass). */
  selectivities: number[];
  filteredTwoThreads: boolean;
  /** Queries used for the exact (flat) indexes. */
  flatQueries: number;
  recallTarget: number;
  installFaiss: boolean;
  /** Rebuild hnswlib-node's addon for the running Node even when it loads. */
  rebuildPeers: boolean;
  outDir: string | null;
  keepTmp: boolean;
  /** Re-render ann.md / ann.svg from this ann.json instead of measuring. */
  renderFrom: string | null;
  /** debian-minilm only: embed just the first N sentences (1000 queries + N - 1000 indexed). */
  limitSentences: number | null;
}

/** Full sizes: GloVe, MNIST and debian-minilm whole; the synthetic set has 200k vectors. */
export const FULL_SIZES: Record<SetName, number> = { glove: Infinity, mnist: Infinity, synthetic: 200_000, 'debian-minilm': 120_000 };
const QUICK_SIZES: Record<SetName, number> = { glove: 100_000, mnist: 30_000, synthetic: 50_000, 'debian-minilm': 50_000 };

/** Metadata column used by the filtered cases: bucket in [0, BUCKETS), uniform over ids. */
export const BUCKETS = 1000;

function pow2Near(x: number): number {
  return 2 ** Math.max(4, Math.round(Math.log2(x)));
}

type Flags = Map<string, string | true>;

/** `--name` and `--name=value` flags; --help prints `help` and exits. */
function readFlags(argv: string[], known: string[], help: string): Flags {
  const flags: Flags = new Map();
  for (const a of argv) {
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a} (flags are --name or --name=value)`);
    const eq = a.indexOf('=');
    if (eq < 0) flags.set(a.slice(2), true);
    else flags.set(a.slice(2, eq), a.slice(eq + 1));
  }
  for (const f of flags.keys()) if (!known.includes(f)) throw new Error(`unknown flag --${f}; try --help`);
  if (flags.has('help')) {
    process.stdout.write(help);
    process.exit(0);
  }
  return flags;
}

function listFlag(flags: Flags, name: string): string[] | null {
  const v = flags.get(name);
  if (v === undefined) return null;
  if (v === true) throw new Error(`--${name} needs a value`);
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

function setsFlag(flags: Flags, fallback: readonly SetName[]): SetName[] {
  const setList = listFlag(flags, 'sets');
  if (!setList) return [...fallback];
  for (const s of setList) if (!(ALL_SETS as readonly string[]).includes(s)) throw new Error(`unknown set ${s}`);
  return ALL_SETS.filter((s) => setList.includes(s));
}

function queriesFlag(flags: Flags): number {
  const queries = flags.has('queries') ? Number(flags.get('queries')) : 1000;
  if (!Number.isInteger(queries) || queries < 10 || queries > 10_000) throw new Error('--queries must be an integer in 10..10000');
  return queries;
}

/** The sweeps of full mode, dense enough to find recall 0.99 and more. */
const FULL_EF_SWEEP = [10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024];
const FULL_NPROBE_SWEEP = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512];
const QUICK_HNSW: HnswBuild = { m: 16, efConstruction: 64 };
const FULL_HNSW: HnswBuild[] = [
  { m: 16, efConstruction: 200 },
  { m: 32, efConstruction: 200 },
];

export function parseArgs(argv: string[]): Plan {
  const known = ['full', 'quick', 'only', 'skip', 'sets', 'queries', 'no-install', 'out', 'keep-tmp', 'help', 'size', 'render', 'limit-sentences', 'rebuild-peers'];
  const flags = readFlags(argv, known, HELP);
  const full = flags.has('full');
  const expand = (names: string[]): LibName[] =>
    names.flatMap((n) => {
      if (GROUPS[n]) return [...GROUPS[n]!];
      if ((ALL_LIBS as readonly string[]).includes(n)) return [n as LibName];
      throw new Error(`unknown library ${n}; known: ${[...Object.keys(GROUPS), ...ALL_LIBS].join(', ')}`);
    });
  // Quick mode leaves FAISS's HNSW out (its Debian build is generic x86-64 and slow to build);
  // --only can ask for it.
  let libs = full ? [...ALL_LIBS] : ALL_LIBS.filter((l) => l !== 'faiss-hnsw');
  const only = listFlag(flags, 'only');
  if (only) libs = ALL_LIBS.filter((l) => expand(only).includes(l));
  const skip = listFlag(flags, 'skip');
  if (skip) libs = libs.filter((l) => !expand(skip).includes(l));

  const sets = setsFlag(flags, DEFAULT_SETS);
  const queries = queriesFlag(flags);

  const sizes = { ...(full ? FULL_SIZES : QUICK_SIZES) };
  // --size=N caps every set (for development on small subsets).
  if (flags.has('size')) {
    const cap = Number(flags.get('size'));
    if (!Number.isInteger(cap) || cap < 1000) throw new Error('--size must be an integer >= 1000');
    for (const s of ALL_SETS) sizes[s] = Math.min(sizes[s], cap);
  }
  // --limit-sentences=N tries the debian-minilm pipeline end to end on a sample (development).
  let limitSentences: number | null = null;
  if (flags.has('limit-sentences')) {
    limitSentences = Number(flags.get('limit-sentences'));
    if (!Number.isInteger(limitSentences) || limitSentences < 2000) throw new Error('--limit-sentences must be an integer >= 2000');
    sizes['debian-minilm'] = Math.min(sizes['debian-minilm'], limitSentences - 1000);
  }
  const out = flags.get('out');
  return {
    mode: full ? 'full' : 'quick',
    sets,
    libs,
    sizes,
    queries,
    k: 10,
    hnswBuilds: full ? [...FULL_HNSW] : [QUICK_HNSW],
    nlist: (n) => pow2Near(4 * Math.sqrt(n)),
    efSweep: full ? FULL_EF_SWEEP : [10, 20, 40, 80, 160, 320, 640],
    nprobeSweep: full ? FULL_NPROBE_SWEEP : [1, 2, 4, 8, 16, 32, 64, 128, 256],
    stopRecall: full ? 0.999 : 0.99,
    maxSecondsPerSetting: full ? 60 : 2,
    selectivities: [0.5, 0.1, 0.01, 0.001],
    filteredTwoThreads: full,
    flatQueries: full ? Infinity : 200,
    recallTarget: 0.95,
    installFaiss: !flags.has('no-install'),
    rebuildPeers: flags.has('rebuild-peers'),
    outDir: typeof out === 'string' ? out : null,
    keepTmp: flags.has('keep-tmp'),
    renderFrom: typeof flags.get('render') === 'string' ? (flags.get('render') as string) : null,
    limitSentences,
  };
}

const HELP = `npm run bench:ann [-- flags]

Compares sable's index types (sable, hnsw, ivf, flat) with hnswlib-node, usearch, LanceDB
(installed on demand into bench/.cache/lancedb) and FAISS (Debian's libfaiss through a C++
harness) on GloVe-100, MNIST-784, a synthetic 768-d set and
debian-minilm (384-d MiniLM embeddings of Debian documentation sentences).

  --full                whole sets, denser sweeps, two HNSW build settings, faiss-hnsw, all
                        queries for the exact indexes, two-thread filtered cases (quick otherwise)
  --only=a,b            libraries or groups: sable, sable-hnsw, sable-ivf, sable-flat, hnswlib,
                        usearch, lancedb (IVF-PQ), lancedb-hnsw (IVF-HNSW-SQ), faiss-hnsw, faiss-ivf,
                        faiss-flat; groups sable-all (the four sable index types), lancedb-all
                        (both LanceDB indexes), faiss (the three FAISS ones), peers
  --skip=a,b            the same names, left out
  --sets=glove,mnist,synthetic,debian-minilm   (default: all four)
  --queries=N           held-out queries per set (default 1000)
  --size=N              cap every set at N vectors (development)
  --limit-sentences=N   debian-minilm: embed only its first N sentences, 1000 of them queries
                        (development; flagged as a sample in its meta.json, so a run without
                        the flag rebuilds the whole set, resuming from the sample's vectors)
  --no-install          do not apt-get install libfaiss-dev when it is missing
  --rebuild-peers       rebuild hnswlib-node's addon for the running Node even when it loads
                        (without it: only when missing or when it does not load here, e.g. built
                        for another Node's ABI). usearch is built from source only when none of
                        its binaries loads. A peer that does not load nor build is skipped, the
                        reason printed and written to ann.md / ann.json
  --out=DIR             write ann.md / ann.svg / ann.json there (default bench/results)
  --keep-tmp            keep the index files written for worker threads
  --render=FILE         only re-render ann.md / ann.svg from a previous ann.json
`;

/** bench:ann:matrix: sable loaded each way at each size against the peers' one build. */
export interface MatrixPlan {
  sets: SetName[];
  /** Indexed rows; each capped at the set's count when run. */
  sizes: number[];
  patterns: LoadPattern[];
  /** sable and the peers measured. */
  libs: MatrixLib[];
  queries: number;
  k: number;
  /** Depth of the ground truth the deletes are read off (groundTruthAfterDeletes). */
  deepK: number;
  hnsw: HnswBuild;
  full: boolean;
  efSweep: number[];
  nprobeSweep: number[];
  stopRecall: number;
  maxSecondsPerSetting: number;
  /** The bar: QPS ratio over the best peer at each recall, and where the default lands. */
  bar: { ratios: { recall: number; ratio: number }[]; defaultRecall: [number, number] };
  rebuildPeers: boolean;
  outDir: string | null;
  keepTmp: boolean;
}

export type MatrixLib = 'sable' | 'hnswlib' | 'usearch';
const MATRIX_LIBS: readonly MatrixLib[] = ['sable', 'hnswlib', 'usearch'];

export function parseMatrixArgs(argv: string[]): MatrixPlan {
  const flags = readFlags(argv, ['sets', 'sizes', 'patterns', 'only', 'full', 'queries', 'out', 'keep-tmp', 'rebuild-peers', 'help'], MATRIX_HELP);
  const sizes = (listFlag(flags, 'sizes') ?? ['10000', '60000', '120000']).map(Number);
  for (const n of sizes) if (!Number.isInteger(n) || n < 1000) throw new Error('--sizes: integers >= 1000');
  const patterns = listFlag(flags, 'patterns') ?? [...LOAD_PATTERNS];
  for (const p of patterns) if (!(LOAD_PATTERNS as readonly string[]).includes(p)) throw new Error(`unknown pattern ${p}; known: ${LOAD_PATTERNS.join(', ')}`);
  const libs = listFlag(flags, 'only') ?? ['sable', 'hnswlib'];
  for (const l of libs) if (!(MATRIX_LIBS as readonly string[]).includes(l)) throw new Error(`--only: one of ${MATRIX_LIBS.join(', ')}`);
  const full = flags.has('full');
  const out = flags.get('out');
  return {
    sets: setsFlag(flags, ['debian-minilm', 'glove']),
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    patterns: LOAD_PATTERNS.filter((p) => patterns.includes(p)),
    libs: MATRIX_LIBS.filter((l) => libs.includes(l)),
    queries: queriesFlag(flags),
    k: 10,
    deepK: 40,
    hnsw: full ? FULL_HNSW[0]! : QUICK_HNSW,
    full,
    efSweep: FULL_EF_SWEEP,
    nprobeSweep: FULL_NPROBE_SWEEP,
    stopRecall: 0.995,
    maxSecondsPerSetting: 5,
    bar: {
      ratios: [
        { recall: 0.95, ratio: 3 },
        { recall: 0.99, ratio: 2 },
      ],
      defaultRecall: [0.95, 0.97],
    },
    rebuildPeers: flags.has('rebuild-peers'),
    outDir: typeof out === 'string' ? out : null,
    keepTmp: flags.has('keep-tmp'),
  };
}

const MATRIX_HELP = `npm run bench:ann:matrix [-- flags]

sable loaded through its embedded API with the engine's default promotion policy, one way per
cell (sizes x loading patterns), against hnswlib built once per set and size on every row (with
the same 20% of the ids markDelete'd for deletes-20). One search thread. Writes
bench/results/ann-matrix.md and ann-matrix.json.

  --sets=debian-minilm,glove   (default; any of glove, mnist, synthetic, debian-minilm)
  --sizes=10000,60000,120000   indexed rows (default), each capped at the set's count
  --patterns=a,b        bulk, batch-10000, batch-100, single, deletes-20 (default: all five)
  --only=a,b            sable, hnswlib, usearch (default: sable,hnswlib)
  --full                peers built with efConstruction 200 (default 64), M=16 either way
  --queries=N           held-out queries per set (default 1000)
  --out=DIR             write ann-matrix.md / .json there (default bench/results)
  --rebuild-peers       rebuild hnswlib-node's addon for the running Node even when it loads
  --keep-tmp            keep the index files the peers write
`;
