/** A dataset's snapshot files: caches of its sealed partitions, named `<dataset uid>-<pid>.seg`. */
import { readdirSync } from 'node:fs';
import { native } from '../native.js';
import type { Partition } from '../partition.js';
import type { PartitionRecord } from '../lmdb-store.js';
import type { DatasetCore } from './core.js';

/** Writes a partition's snapshot file (durable engines only): its name and checksum, for its record. */
export async function saveSnapshot(core: DatasetCore, p: Partition): Promise<Pick<PartitionRecord, 'snapshot' | 'checksum'>> {
  if (!core.storage.durable) return {};
  const snapshot = `${core.uid}-${p.pid}.seg`;
  const checksum = await native.segmentSave(p.handle, core.storage.snapshotPath(snapshot));
  return { snapshot, checksum };
}

/** The dataset's snapshot files on disk (finished or being written). */
export function snapshotFiles(core: DatasetCore): string[] {
  return readdirSync(core.storage.segmentsDir).filter((file) => {
    const m = /^(\d+)-(\d+)\.seg(\.tmp)?$/.exec(file);
    return m !== null && Number(m[1]) === core.uid;
  });
}
