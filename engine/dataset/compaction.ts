/**
 * Compaction: sealed partitions are merged into one, rebuilt without their deleted rows. Writes
 * and searches go on meanwhile: a write that meets a merged row tombstones it in the sources and
 * in the target alike; the target replaces the sources in one LMDB transaction and one swap of
 * the partition list.
 *
 * It runs on request (`compact`), at `flush` (`foldTails`) and by itself (`compactSoon`, after
 * each seal and each write that removed sealed rows): without it every promotion adds a
 * partition and every replaced or deleted row stays in memory and on disk, so a dataset under
 * steady writes grows without bound.
 *
 * Indexes with lists (sable, ivf) and flat keep one partition up to ONE_PARTITION_MAX_ROWS: a
 * second partition costs a search about as much as the first (a 10k tail beside 50k rows cost
 * 35% of the QPS at recall 0.95), so partitions sealed beside the largest fold into it once they
 * add up to FOLD_SHARE of it or FOLD_COUNT of them wait. Folding extends the largest index
 * without training (its rows encoded against its lists) until it holds EXTEND_FACTOR times the
 * rows it was trained on, then trains one anew over all: each row is trained on about twice.
 * Lists that hold twice their rows cost more per recall (GloVe 340k loaded in single rows: 6.0k
 * QPS at recall 0.965 where a build over all gave 7.6k at 0.961), so when the dataset is idle,
 * and at flush, an index past IDLE_EXTEND_FACTOR times its training rows is trained anew.
 * HNSW, and datasets past that size, merge by tiers: partitions of about the same size (the same
 * power of 4 of live rows) are merged once PER_TIER of them exist, so each row is rewritten
 * about once per tier. A partition whose dead share reaches DEAD_SHARE is rewritten at once.
 */
import { rmSync } from 'node:fs';
import { native } from '../native.js';
import { Partition } from '../partition.js';
import type { DatasetCore } from './core.js';
import { seal } from './seal.js';
import { shareLists } from './shared-lists.js';
import { saveSnapshot } from './snapshots.js';

/**
 * Tombstones cost a search the filter of live rows and lists widened by the dead share: 120k
 * debian-minilm rows a fifth deleted (just under the 0.2 this was) answered 12.5k QPS at recall
 * 0.95 where the rows without them gave 18.2k. A rewrite keeps the index (a copy).
 */
const DEAD_SHARE = 0.1;
const PER_TIER = 8;
const FOLD_SHARE = 1 / 16;
const FOLD_COUNT = 4;
const EXTEND_FACTOR = 2;
const IDLE_EXTEND_FACTOR = 1.25;
/** A rebuild holds the rows twice while it trains: past this, partitions merge by tiers. */
export const ONE_PARTITION_MAX_ROWS = 4_194_304;

/** Merges the sealed partitions that are small or carry tombstones; resolves with how many. */
export async function compact(core: DatasetCore): Promise<{ merged: number }> {
  core.checkOpen();
  return core.maintenanceTurn(async () => {
    await core.settle();
    return merge(core, (sealed) => {
      const folded = fold(core, sealed, true);
      if (folded) return folded;
      const chosen = sealed.filter(({ live, rows }) => live < rows || live < core.manifest.promotion.max_buffer_vectors);
      return chosen.length >= 2 || chosen.some(({ live, rows }) => live < rows) ? { sources: chosen } : null;
    });
  });
}

/** At flush: every partition sealed beside the largest folds into it (indexes that keep one). */
export async function foldTails(core: DatasetCore): Promise<void> {
  await core.maintenanceTurn(async () => {
    await core.settle();
    await merge(core, (sealed) => fold(core, sealed, true));
  });
}

/**
 * Queues an automatic compaction behind other maintenance, unless one is queued already;
 * `foldNow` folds tail partitions however small (the dataset is idle).
 */
export function compactSoon(core: DatasetCore, foldNow = false): void {
  if (core.closing || core.compactionQueued) return;
  core.compactionQueued = true;
  // Not tracked as background work: `settle` runs inside maintenance turns and would wait for it.
  void core
    .maintenanceTurn(async () => {
      core.compactionQueued = false;
      if (!core.closing) await merge(core, (sealed) => fold(core, sealed, foldNow) ?? tiered(sealed));
    })
    .catch((e: Error) => core.fail(e));
}

/** Indexes a frozen partition (seal.ts), then queues the compaction that may fold it. */
export function sealThenCompact(core: DatasetCore, p: Partition): Promise<void> {
  return seal(core, p).then(() => compactSoon(core));
}

/** After a write removed rows of `touched` partitions: compacts once a sealed one is dead enough. */
export function noteRemovals(core: DatasetCore, touched: Partition[]): void {
  const deadHeavy = touched.some((p) => p.state === 'sealed' && isDeadHeavy(native.segmentStats(p.handle)));
  if (deadHeavy) compactSoon(core);
}

function isDeadHeavy({ live, rows }: { live: number; rows: number }): boolean {
  return rows > 0 && rows - live >= DEAD_SHARE * rows;
}

interface Sealed {
  partition: Partition;
  live: number;
  rows: number;
}

/**
 * Partitions merged into one target; with a base, the others join its index without training;
 * with retrain, an index is trained anew even for one source.
 */
interface MergePlan {
  sources: Sealed[];
  base?: Sealed;
  retrain?: boolean;
}

/**
 * The partitions beside the largest folded into it, when the dataset's index keeps one partition
 * and they are due (always when `now`); null when there is nothing to fold.
 */
function fold(core: DatasetCore, sealed: Sealed[], now: boolean): MergePlan | null {
  if (core.manifest.indexType === 'hnsw' || sealed.length === 0) return null;
  const total = sealed.reduce((sum, s) => sum + s.live, 0);
  if (total > ONE_PARTITION_MAX_ROWS) return null;
  const largest = sealed.reduce((a, b) => (b.live > a.live ? b : a));
  const trained = largest.partition.trainedRows || largest.rows;
  const extendUpTo = (now ? IDLE_EXTEND_FACTOR : EXTEND_FACTOR) * trained;
  if (sealed.length === 1) return now && total > extendUpTo ? { sources: sealed, retrain: true } : null;
  const beside = total - largest.live;
  if (!now && beside < FOLD_SHARE * largest.live && sealed.length - 1 < FOLD_COUNT) return null;
  return total <= extendUpTo ? { sources: sealed, base: largest } : { sources: sealed, retrain: true };
}

/**
 * Whether the automatic compaction would fold a frozen partition, as it is now, into the largest
 * index at once by extending it (so the partition's own build would be thrown away).
 */
export function foldsAtOnce(core: DatasetCore, p: Partition): boolean {
  const plan = fold(core, [...foldable(core), { partition: p, ...native.segmentStats(p.handle) }], false);
  return plan?.base !== undefined && plan.base.partition !== p && keepsIndex(core, plan.base.partition);
}

/** The partitions a compaction may take: sealed ones, and frozen ones left to a fold. */
function foldable(core: DatasetCore): Sealed[] {
  return core.partitions
    .filter((p) => p.state === 'sealed' || p.awaitingFold)
    .map((partition) => ({ partition, ...native.segmentStats(partition.handle) }));
}

/** Frozen partitions left to a fold that the compaction did not take are indexed after all. */
async function sealLeftToFold(core: DatasetCore): Promise<void> {
  for (const p of core.partitions.filter((q) => q.awaitingFold)) {
    p.awaitingFold = false;
    await seal(core, p);
  }
}

function tiered(sealed: Sealed[]): MergePlan | null {
  const chosen = sealed.filter(isDeadHeavy);
  const tiers = new Map<number, Sealed[]>();
  for (const s of sealed) {
    if (isDeadHeavy(s)) continue;
    const tier = Math.floor(Math.log2(Math.max(1, s.live)) / 2);
    const same = tiers.get(tier);
    if (same) same.push(s);
    else tiers.set(tier, [s]);
  }
  for (const same of tiers.values()) if (same.length >= PER_TIER) chosen.push(...same);
  return chosen.length > 0 ? { sources: chosen } : null;
}

/**
 * The rows of a plan's sources in one new segment, and the rows its index was trained on when it
 * has one already. One source rewritten without its dead rows keeps its index (the rows left are
 * those its lists were trained on), dropped rows and all, so a rewrite costs a copy: a build
 * trains and encodes again, holding several times the partition's memory meanwhile (under steady
 * deletes the soak's RSS swung by 0.8 GB at each rewrite of a 100k x 768 partition). With a base,
 * the segment carries the base's index for its build to extend. Anything else (merged sources,
 * an index of another type than the dataset's now) gets a new build.
 */
async function copyOrMerge(core: DatasetCore, plan: MergePlan): Promise<{ handle: number; trainedRows: number }> {
  const sources = plan.sources.map((s) => s.partition);
  const trainedOf = (p: Partition) => p.trainedRows || native.segmentStats(p.handle).rows;
  const base = plan.base?.partition;
  if (base && keepsIndex(core, base)) {
    const others = sources.filter((p) => p !== base).map((p) => p.handle);
    return { handle: await native.segmentExtend(base.handle, others), trainedRows: trainedOf(base) };
  }
  if (sources.length === 1 && !plan.retrain && keepsIndex(core, sources[0]!)) {
    return { handle: await native.segmentLiveCopy(sources[0]!.handle), trainedRows: trainedOf(sources[0]!) };
  }
  // Room for every live row at once: grown by doubling, the copy of a large merge would hold up
  // to twice its rows, and three times while one reallocation copies them.
  const rows = plan.sources.reduce((sum, s) => sum + s.live, 0);
  const handle = native.segmentCreate(core.dim, core.manifest.metric, rows);
  for (const src of sources) await native.segmentAbsorb(handle, src.handle);
  return { handle, trainedRows: 0 };
}

function keepsIndex(core: DatasetCore, p: Partition): boolean {
  const st = native.segmentStats(p.handle);
  return st.indexStatus === 'ready' && st.indexType === core.manifest.indexType;
}

async function merge(core: DatasetCore, choose: (sealed: Sealed[]) => MergePlan | null): Promise<{ merged: number }> {
  try {
    return await mergeChosen(core, choose);
  } finally {
    if (!core.closing) await sealLeftToFold(core);
  }
}

async function mergeChosen(core: DatasetCore, choose: (sealed: Sealed[]) => MergePlan | null): Promise<{ merged: number }> {
  const plan = await core.exclusive(async () => {
    if (core.closing) return null;
    const chosen = choose(foldable(core));
    if (!chosen || chosen.sources.length === 0) return null;
    const pid = core.manifest.nextPartition++;
    await core.storage.write(() => core.storage.catalog.put(core.name, core.manifest));
    const made = await copyOrMerge(core, chosen);
    const target = new Partition(pid, made.handle, 'sealing');
    target.trainedRows = made.trainedRows;
    core.compaction = { target, sources: new Set(chosen.sources.map((s) => s.partition)) };
    return core.compaction;
  });
  if (!plan) return { merged: 0 };
  const { storage, uid } = core;
  // Sources whose rows were all deleted leave nothing to build or keep.
  const { live, indexStatus } = native.segmentStats(plan.target.handle);
  const empty = live === 0;
  try {
    if (!empty && indexStatus !== 'ready') {
      const extended = await core.buildInTurn(plan.target.handle);
      if (!extended) plan.target.trainedRows = live;
    }
    const snapshot = empty ? {} : await saveSnapshot(core, plan.target);
    await core.exclusive(async () => {
      const ids = native.segmentLiveIds(plan.target.handle);
      const kept = empty ? [] : [plan.target];
      await storage.write(() => {
        if (kept.length > 0) {
          const record = { pid: plan.target.pid, state: 'sealed' as const, ...snapshot, createdAt: Date.now(), trainedRows: plan.target.trainedRows };
          storage.putSealed(uid, record, ids);
        }
        for (const src of plan.sources) {
          storage.removePartition(uid, src.pid);
          storage.removeRange(storage.tombs, [uid, src.pid]);
          // A frozen source (left to this fold) is recorded by its pending ids.
          storage.pending.remove([uid, src.pid]);
        }
      });
      plan.target.state = 'sealed';
      core.partitions = [...core.partitions.filter((p) => !plan.sources.has(p)), ...kept];
      core.compaction = null;
      shareLists(core);
      if (kept.length === 0) core.retirement.retire(plan.target.handle);
      for (const src of plan.sources) {
        core.retirement.retire(src.handle);
        if (storage.durable) rmSync(storage.snapshotPath(`${uid}-${src.pid}.seg`), { force: true });
      }
    });
  } catch (e) {
    core.compaction = null;
    native.segmentRelease(plan.target.handle);
    throw e;
  }
  return { merged: plan.sources.size };
}
