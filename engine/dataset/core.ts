/**
 * The state one dataset's sections share (writes, partitions, compaction, search, hybrid,
 * settings): its storage and manifest, its partitions, and the three orders its work runs in.
 *
 * - Writes run one at a time (`exclusive`): each commits to LMDB, then updates the segments;
 *   upserts and deletes that wait meanwhile share one commit (write-groups.ts).
 * - Index builds run one at a time (`buildInTurn`): each uses every core already.
 * - Compactions and rebuilds take turns (`maintenanceTurn`): both rewrite sealed partitions.
 * Seals and builds started by writes run in the background (`track`); `settle` waits for them.
 */
import { SableError } from '../../errors/codes.js';
import type { ColumnContext } from '../columns.js';
import type { KeywordIndex } from '../keyword/bm25.js';
import { native } from '../native.js';
import { SegmentRetirement, type Partition } from '../partition.js';
import { SlaTuner } from '../sla.js';
import type { DatasetManifest, LmdbStore } from '../lmdb-store.js';

/* The write group's shapes (write-groups.ts) live here, where the queue of waiting writes is
   kept, so the dataset's files depend on core.ts and never back through it. */
/** A write's plan: its LMDB changes and, once those are durable, its segment changes. */
export interface StagedWrite {
  /** Inside the turn's write transaction. */
  record(): void;
  /** After the commit: changes the segments and answers the write's result. */
  apply(): number;
}

export interface GroupedWrite {
  /** Every id the write adds, replaces or deletes (no repeats). */
  ids: ArrayLike<number>;
  /** Rows it appends to the growing partition. */
  rows: number;
  /** Plans the write against the segments as they are now (in its turn, before the commit). */
  stage(): StagedWrite;
}

export interface WaitingWrite extends GroupedWrite {
  resolve(n: number): void;
  reject(e: unknown): void;
}

export class DatasetCore {
  partitions: Partition[] = [];
  growing!: Partition;
  /** A compaction under way: the partition it builds and the ones it replaces. */
  compaction: { target: Partition; sources: Set<Partition> } | null = null;
  readonly ctx: ColumnContext;
  readonly tuner: SlaTuner;
  /** BM25 index over the `text` metadata, built on the first keyword search. */
  keyword: KeywordIndex | null = null;
  keywordBuild: Promise<KeywordIndex> | null = null;
  ageTimer: NodeJS.Timeout | null = null;
  closed = false;
  /** Set when close or destroy starts: no automatic compaction starts after it. */
  closing = false;
  /** An automatic compaction waits for its maintenance turn. */
  compactionQueued = false;
  /** When the last index build finished (null before any). */
  builtAt: string | null = null;
  /** Partitions swapped out, released once no runner search may still hold them. */
  readonly retirement = new SegmentRetirement();
  /** When a partition was last sealed (ms): a dataset idle since folds its tail partitions. */
  lastSealAt = 0;
  /** Rebuilds asked for that wait for their turn (reported as building from the call on). */
  rebuildsWaiting = 0;
  /** How many snapshots were rebuilt from LMDB when the dataset was opened. */
  rebuiltSnapshots = 0;
  /** Rows not served because their snapshot held them past a delete (see partitions.openSealed). */
  repairedRows = 0;
  /** Bulk loads under way (bulk-load.ts), the rows they announced, and the partition gathering them. */
  bulkLoads = 0;
  bulkRowsExpected = 0;
  gathered: Partition | null = null;
  /** Partitions being copied into `gathered`. */
  readonly gatherings = new Set<Promise<void>>();

  /** Upserts and deletes waiting for the next writer turn (write-groups.ts). */
  readonly waitingWrites: WaitingWrite[] = [];
  writeTurnQueued = false;

  private queue: Promise<unknown> = Promise.resolve();
  private maintenance: Promise<unknown> = Promise.resolve();
  private buildQueue: Promise<void> = Promise.resolve();
  readonly buildHolds = new Set<() => void>();
  private readonly background = new Set<Promise<unknown>>();
  private backgroundError: Error | null = null;

  constructor(
    readonly storage: LmdbStore,
    readonly manifest: DatasetManifest,
  ) {
    this.ctx = { types: manifest.columns, dictionaries: new Map() };
    this.tuner = new SlaTuner(manifest.sla);
  }

  get name(): string {
    return this.manifest.name;
  }
  get dim(): number {
    return this.manifest.dim;
  }
  get uid(): number {
    return this.manifest.uid;
  }

  checkOpen(): void {
    if (this.closed) throw new SableError('dataset_closed', `dataset '${this.name}' is closed`);
  }

  /** Every partition a write must reach: the dataset's and a compaction's target. */
  allPartitions(): Partition[] {
    return this.compaction ? [...this.partitions, this.compaction.target] : this.partitions;
  }

  /** Runs `fn` after every earlier write of this dataset (one writer at a time). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Compactions and rebuilds take turns: both rewrite sealed partitions, and a rebuild of a
   * partition a compaction has merged away would bring its record back.
   */
  maintenanceTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.maintenance.then(fn, fn);
    this.maintenance = run.catch(() => undefined);
    return run;
  }

  /**
   * Index builds of this dataset run one after another: each already uses every core, and a
   * sealed partition waiting for its turn holds only its rows, where one building also holds
   * its training scratch (a bulk load seals a partition every few seconds).
   */
  buildInTurn(handle: number): Promise<boolean> {
    const turn = this.buildQueue.then(() => this.build(handle));
    this.buildQueue = turn.then(
      () => {},
      () => {},
    );
    return turn;
  }

  /** Builds a segment's index with the dataset's index type and tuning, now; true when a seed index was extended instead. */
  build(handle: number): Promise<boolean> {
    const t = this.manifest.tuning;
    return native.segmentBuild(handle, this.manifest.indexType, { nlist: t.nlist, m: t.m, efConstruction: t.ef_construction });
  }

  /**
   * Defers the builds queued after this call until the returned function is called (once;
   * `onRelease` runs then).
   */
  holdBuilds(onRelease?: () => void): () => void {
    let lift!: () => void;
    const held = new Promise<void>((resolve) => (lift = resolve));
    this.buildQueue = this.buildQueue.then(() => held);
    const release = () => {
      if (!this.buildHolds.delete(release)) return;
      lift();
      onRelease?.();
    };
    this.buildHolds.add(release);
    return release;
  }

  /** Runs `work` in the background; its failure is rethrown by the next `settle`. */
  track(work: Promise<unknown>): void {
    const p = work.catch((e: Error) => {
      this.backgroundError = e;
    });
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }

  /** Waits for background seals and builds; rethrows the first failure. */
  async settle(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
    if (this.backgroundError) {
      const e = this.backgroundError;
      this.backgroundError = null;
      throw e;
    }
  }

  /** Records a failure of work nobody awaits (the age timer's promotions). */
  fail(e: Error): void {
    this.backgroundError = e;
  }

  /** Waits until no write, compaction, rebuild or background build is under way. */
  async quiesce(): Promise<void> {
    // A writer turn that leaves writes waiting queues the next turn behind itself.
    for (let turn = this.queue; ; turn = this.queue) {
      await turn.catch(() => undefined);
      if (turn === this.queue) break;
    }
    await this.maintenance;
    await this.settle().catch(() => undefined);
  }
}
