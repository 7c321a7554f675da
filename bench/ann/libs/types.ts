// Shapes shared by the orchestrator, the per-library child processes and the report.
import type { HnswBuild, LibName, SetName } from '../config.js';
import type { LoadedSet } from '../datasets.js';

/** One point of a sweep: one search setting measured over all queries. */
export interface SweepPoint {
  /** e.g. "ef=64", "nprobe=8", "default". */
  param: string;
  value: number | null;
  recall: number;
  qps1: number;
  qps2: number | null;
}

/**
 * How the rows go in (`bench:ann:matrix`): sable through its default promotion policy, so the
 * partitions are those a user gets; a peer builds on every row as ever, then deletes the same
 * rows for `deletes-20`.
 */
export type LoadPattern = 'bulk' | 'batch-10000' | 'batch-100' | 'single' | 'deletes-20';
export const LOAD_PATTERNS: readonly LoadPattern[] = ['bulk', 'batch-10000', 'batch-100', 'single', 'deletes-20'];

/** Share of the ids a pattern deletes after its load (metrics.ts: isDeleted picks them). */
export function deletedShare(load: LoadPattern | undefined): number {
  return load === 'deletes-20' ? 0.2 : 0;
}

/** What a loading pattern left behind. */
export interface LoadFigures {
  pattern: LoadPattern;
  /** Rows deleted after the load. */
  deleted: number;
  /** From the first write until the last flush (or delete) resolved. */
  loadSeconds: number;
  /** From then until background seals and compactions went idle (null for a peer). */
  settleSeconds: number | null;
  /** sable's stats().partitions once settled (null for a peer). */
  partitions: number | null;
}

/** sable's filtered cases: one selectivity at the chosen operating point. */
export interface FilteredPoint {
  selectivity: number;
  matching: number;
  param: string;
  recall: number;
  qps1: number;
  qps2: number | null;
  /** The planner's strategy from the search receipt, when the engine reports one. */
  strategy: string | null;
  /** One-thread QPS of an exact scan of the matches (the planner's alternative), when measured. */
  qpsExact?: number | null;
}

export interface LibRun {
  lib: LibName;
  set: SetName;
  /** Build settings, e.g. "M=16 efC=100". */
  build: string;
  version: string;
  n: number;
  dim: number;
  buildSeconds: number;
  buildThreads: number;
  /** Resident-set growth over the build (after GC), bytes. */
  rssBytes: number | null;
  /** The same growth once the process has sat idle for a few seconds (V8 hands back the young
   * generation a write burst grew; native heaps keep what they hold), bytes. */
  rssSettledBytes: number | null;
  /** The settled growth of anonymous memory only (RssAnon): without file pages mapped, such as
   * an LMDB file's, which the kernel may drop and reread (null where /proc is not readable). */
  rssAnonSettledBytes?: number | null;
  /** The library's own size figure, bytes, and what it is. */
  selfBytes: number | null;
  selfKind: string;
  points: SweepPoint[];
  filtered: FilteredPoint[];
  notes: string[];
  isa?: string;
  /** Set when the task named a loading pattern. */
  load?: LoadFigures;
  error?: string;
}

/** A run with nothing measured yet (filled in as it goes, or reported with an error). */
export function emptyLibRun(task: Pick<ChildTask, 'lib' | 'set' | 'n'>, n = task.n, dim = 0): LibRun {
  return {
    lib: task.lib,
    set: task.set,
    build: '',
    version: '',
    n,
    dim,
    buildSeconds: 0,
    buildThreads: 0,
    rssBytes: null,
    rssSettledBytes: null,
    selfBytes: null,
    selfKind: '',
    points: [],
    filtered: [],
    notes: [],
  };
}

export interface ChildTask {
  lib: LibName;
  set: SetName;
  n: number;
  nq: number;
  k: number;
  gtFile: string;
  hnsw: HnswBuild;
  nlist: number;
  sweep: number[];
  stopRecall: number;
  maxSecondsPerSetting: number;
  selectivities: number[];
  recallTarget: number;
  /** Measure the filtered cases with two threads too. */
  filteredTwoThreads: boolean;
  /** Queries used for exact (flat) indexes; the rest of the run uses `nq`. */
  flatQueries: number;
  tmpDir: string;
  keepTmp: boolean;
  /** Load this way (sable: default promotion policy; peers: see LoadPattern); absent: as bench:ann. */
  load?: LoadPattern;
  /** Measure one thread only (no two-thread warm-up, passes or worker threads). */
  oneThread?: boolean;
}

/** What an in-process library offers the common sweep driver. */
export interface Adapter {
  version: string;
  buildLabel: string;
  buildThreads: number;
  /** Name of the swept knob ("ef", "nprobe", "beamWidth"), or null for one fixed setting. */
  knob: string | null;
  build(data: LoadedSet): Promise<void>;
  /** Called once after build and the RSS measurement (e.g. save the index for worker threads). */
  afterBuild?(): Promise<void>;
  selfSize(): Promise<{ bytes: number | null; kind: string }>;
  /** Untimed preparation before the passes of one setting (e.g. reopen with another ef). */
  prepare?(value: number | null): Promise<void>;
  /**
   * Search the first `limit` queries (all by default) with the knob at `value`; returns top-k ids
   * per query. With two threads and a limit, which queries are answered may differ (warm-up only).
   */
  search(value: number | null, threads: 1 | 2, limit?: number): Promise<ArrayLike<number>[]>;
  /** Extra points measured besides the sweep (e.g. the engine's default setting). */
  extraSettings?: { label: string; value: number | null }[];
  filteredSearch?(value: number | null, threshold: number, threads: 1 | 2, limit?: number): Promise<ArrayLike<number>[]>;
  filteredStrategy?(value: number | null, threshold: number): Promise<string | null>;
  /** The same filtered queries answered by an exact scan of the matches. */
  filteredExactSearch?(threshold: number, threads: 1 | 2, limit?: number): Promise<ArrayLike<number>[]>;
  isa?(): string | undefined;
  /** How the rows went in, when the task named a loading pattern. */
  loadFigures?(): LoadFigures | undefined;
  notes: string[];
  close(): Promise<void>;
}
