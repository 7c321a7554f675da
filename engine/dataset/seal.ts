import { native } from '../native.js';
import type { Partition } from '../partition.js';
import type { DatasetCore } from './core.js';
import { shareLists } from './shared-lists.js';
import { saveSnapshot } from './snapshots.js';

/**
 * Indexes a sealing partition, writes its snapshot, and records it sealed with the ids it holds.
 * The caller queues the compaction that may follow (compaction.ts seals partitions too).
 */
export async function seal(core: DatasetCore, p: Partition): Promise<void> {
  // At once, not in the build queue: a partition waiting its turn then holds half the memory.
  await native.segmentCompactRows(p.handle, core.manifest.indexType);
  p.built = false;
  await core.buildInTurn(p.handle);
  p.built = true;
  p.trainedRows = p.rows;
  const snapshot = await saveSnapshot(core, p);
  const ids = native.segmentLiveIds(p.handle);
  await core.storage.write(() => {
    core.storage.putSealed(core.uid, { pid: p.pid, state: 'sealed', ...snapshot, createdAt: Date.now(), trainedRows: p.trainedRows }, ids);
    core.storage.pending.remove([core.uid, p.pid]);
  });
  p.state = 'sealed';
  core.builtAt = new Date().toISOString();
  core.lastSealAt = Date.now();
  shareLists(core);
}
