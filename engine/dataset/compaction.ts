/**
 * Compaction: sealed partitions that are small or carry tombstones are merged into one, rebuilt
 * without the deleted rows. Writes and searches go on meanwhile: a write that meets a merged
 * row tombstones it in the sources and in the target alike; the target replaces the sources in
 * one LMDB transaction and one swap of the partition list.
 */
import { rmSync } from 'node:fs';
import { native } from '../native.js';
import { Partition } from '../partition.js';
import type { DatasetCore } from './core.js';
import { saveSnapshot } from './partitions.js';

/** Resolves with the number of partitions merged (0 when nothing was worth merging). */
export async function compact(core: DatasetCore): Promise<{ merged: number }> {
  core.checkOpen();
  return core.maintenanceTurn(() => compactNow(core));
}

async function compactNow(core: DatasetCore): Promise<{ merged: number }> {
  await core.settle();
  const plan = await core.exclusive(async () => {
    const candidates = core.partitions.filter((p) => {
      if (p.state !== 'sealed') return false;
      const s = native.segmentStats(p.handle);
      return s.live < s.rows || s.live < core.manifest.promotion.max_buffer_vectors;
    });
    const worth = candidates.length >= 2 || candidates.some((p) => native.segmentStats(p.handle).live < p.rows);
    if (!worth) return null;
    const pid = core.manifest.nextPartition++;
    await core.storage.write(() => core.storage.catalog.put(core.name, core.manifest));
    const target = new Partition(pid, native.segmentCreate(core.dim, core.manifest.metric), 'sealing');
    for (const src of candidates) await native.segmentAbsorb(target.handle, src.handle);
    core.compaction = { target, sources: new Set(candidates) };
    return core.compaction;
  });
  if (!plan) return { merged: 0 };
  const { storage, uid } = core;
  try {
    await core.buildInTurn(plan.target.handle);
    const snapshot = await saveSnapshot(core, plan.target);
    await core.exclusive(async () => {
      const ids = native.segmentLiveIds(plan.target.handle);
      await storage.write(() => {
        storage.putSealed(uid, { pid: plan.target.pid, state: 'sealed', ...snapshot, createdAt: Date.now() }, ids);
        for (const src of plan.sources) {
          storage.removePartition(uid, src.pid);
          storage.removeRange(storage.tombs, [uid, src.pid]);
        }
      });
      plan.target.state = 'sealed';
      core.partitions = [...core.partitions.filter((p) => !plan.sources.has(p)), plan.target];
      core.compaction = null;
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
