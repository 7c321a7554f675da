/**
 * Compaction: sealed partitions are merged into one, rebuilt without their deleted rows. Writes
 * and searches go on meanwhile: a write that meets a merged row tombstones it in the sources and
 * in the target alike; the target replaces the sources in one LMDB transaction and one swap of
 * the partition list.
 *
 * It runs on request (`compact`) and by itself (`compactSoon`, after each seal and each write
 * that removed sealed rows): without it every promotion adds a partition and every replaced or
 * deleted row stays in memory and on disk, so a dataset under steady writes grows without bound.
 * The automatic policy is size-tiered: partitions of about the same size (the same power of 4
 * of live rows) are merged once PER_TIER of them exist, so each row is rewritten about once per
 * tier, and a partition whose dead share reaches DEAD_SHARE is rewritten at once.
 */
import { rmSync } from 'node:fs';
import { native } from '../native.js';
import { Partition } from '../partition.js';
import type { DatasetCore } from './core.js';
import { saveSnapshot } from './snapshots.js';

const DEAD_SHARE = 0.2;
const PER_TIER = 8;

/** Merges the sealed partitions that are small or carry tombstones; resolves with how many. */
export async function compact(core: DatasetCore): Promise<{ merged: number }> {
  core.checkOpen();
  return core.maintenanceTurn(async () => {
    await core.settle();
    return merge(core, (sealed) => {
      const chosen = sealed.filter(({ live, rows }) => live < rows || live < core.manifest.promotion.max_buffer_vectors);
      return chosen.length >= 2 || chosen.some(({ live, rows }) => live < rows) ? chosen : [];
    });
  });
}

/** Queues an automatic compaction behind other maintenance, unless one is queued already. */
export function compactSoon(core: DatasetCore): void {
  if (core.closing || core.compactionQueued) return;
  core.compactionQueued = true;
  // Not tracked as background work: `settle` runs inside maintenance turns and would wait for it.
  void core
    .maintenanceTurn(async () => {
      core.compactionQueued = false;
      if (!core.closing) await merge(core, tiered);
    })
    .catch((e: Error) => core.fail(e));
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

function tiered(sealed: Sealed[]): Sealed[] {
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
  return chosen;
}

/**
 * The rows of `sources` in one new segment. One source rewritten without its dead rows keeps its
 * index (the rows left are those its lists were trained on), dropped rows and all, so a rewrite
 * costs a copy: a build trains and encodes again, holding several times the partition's memory
 * meanwhile (under steady deletes the soak's RSS swung by 0.8 GB at each rewrite of a 100k x 768
 * partition). Merged sources, an index of another type than the dataset's now, or one that
 * cannot drop rows get a new build.
 */
async function copyOrMerge(core: DatasetCore, sources: Partition[]): Promise<number> {
  const only = sources.length === 1 ? native.segmentStats(sources[0]!.handle) : null;
  if (only?.indexStatus === 'ready' && only.indexType === core.manifest.indexType) return native.segmentLiveCopy(sources[0]!.handle);
  const handle = native.segmentCreate(core.dim, core.manifest.metric);
  for (const src of sources) await native.segmentAbsorb(handle, src.handle);
  return handle;
}

async function merge(core: DatasetCore, choose: (sealed: Sealed[]) => Sealed[]): Promise<{ merged: number }> {
  const plan = await core.exclusive(async () => {
    if (core.closing) return null;
    const sealed = core.partitions
      .filter((p) => p.state === 'sealed')
      .map((partition) => ({ partition, ...native.segmentStats(partition.handle) }));
    const candidates = choose(sealed).map((s) => s.partition);
    if (candidates.length === 0) return null;
    const pid = core.manifest.nextPartition++;
    await core.storage.write(() => core.storage.catalog.put(core.name, core.manifest));
    const target = new Partition(pid, await copyOrMerge(core, candidates), 'sealing');
    core.compaction = { target, sources: new Set(candidates) };
    return core.compaction;
  });
  if (!plan) return { merged: 0 };
  const { storage, uid } = core;
  // Sources whose rows were all deleted leave nothing to build or keep.
  const { live, indexStatus } = native.segmentStats(plan.target.handle);
  const empty = live === 0;
  try {
    if (!empty && indexStatus !== 'ready') await core.buildInTurn(plan.target.handle);
    const snapshot = empty ? {} : await saveSnapshot(core, plan.target);
    await core.exclusive(async () => {
      const ids = native.segmentLiveIds(plan.target.handle);
      const kept = empty ? [] : [plan.target];
      await storage.write(() => {
        if (kept.length > 0) storage.putSealed(uid, { pid: plan.target.pid, state: 'sealed', ...snapshot, createdAt: Date.now() }, ids);
        for (const src of plan.sources) {
          storage.removePartition(uid, src.pid);
          storage.removeRange(storage.tombs, [uid, src.pid]);
        }
      });
      plan.target.state = 'sealed';
      core.partitions = [...core.partitions.filter((p) => !plan.sources.has(p)), ...kept];
      core.compaction = null;
      if (kept.length === 0) plan.target.release();
      for (const src of plan.sources) {
        src.release();
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
