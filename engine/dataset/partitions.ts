/**
 * Partitions: the growing one takes writes and is searched exactly, or through the largest
 * index's lists once it is large (shared-lists.ts); the promotion policy seals it and builds its
 * index in the background, or leaves it to the compaction's next fold (sealOrFold). What each
 * partition holds is kept in LMDB (a growing partition's `pending` ids; a sealed one's ids
 * recorded at its seal minus its `tombs`); snapshot files are caches of it, reconciled with it
 * whenever they are loaded.
 */
import { rmSync } from 'node:fs';
import type { SableError } from '../../errors/codes.js';
import { columnBatches, Dictionary } from '../columns.js';
import { native } from '../native.js';
import { Partition } from '../partition.js';
import { bytesToFloat32, type Key, type PartitionRecord } from '../lmdb-store.js';
import type { Metadata } from '../types.js';
import { compactSoon, foldsAtOnce, ONE_PARTITION_MAX_ROWS, sealThenCompact } from './compaction.js';
import type { DatasetCore } from './core.js';
import { shareLists } from './shared-lists.js';
import { snapshotFiles } from './snapshots.js';

const REBUILD_CHUNK = 8192;

/** A new growing partition, recorded in LMDB before it takes rows. */
export async function startGrowing(core: DatasetCore): Promise<void> {
  const pid = core.manifest.nextPartition++;
  const rec: PartitionRecord = { pid, state: 'growing', createdAt: Date.now() };
  await core.storage.write(() => {
    core.storage.catalog.put(core.name, core.manifest);
    core.storage.parts.put([core.uid, pid], rec);
  });
  core.growing = new Partition(pid, native.segmentCreate(core.dim, core.manifest.metric, growingReserve(core)), 'growing');
  core.partitions.push(core.growing);
  shareLists(core);
}

/**
 * Freezes the growing partition (when it has rows) and indexes it in the background; during a
 * bulk load of a sable dataset its rows join the load's gathered partition instead (bulk-load.ts).
 */
export async function promoteLocked(core: DatasetCore): Promise<void> {
  const old = await freezeGrowing(core);
  if (old) core.track(gathers(core) ? gather(core, old) : sealOrFold(core, old));
}

/** Inside a writer turn: the growing partition, when it has rows, frozen and replaced by a new one. */
export async function freezeGrowing(core: DatasetCore): Promise<Partition | null> {
  const old = core.growing;
  if (old.rows === 0) return null;
  native.segmentSeal(old.handle);
  old.state = 'sealing';
  await startGrowing(core);
  return old;
}

/** Whether a partition frozen now joins a bulk load's gathered partition. */
function gathers(core: DatasetCore): boolean {
  return core.bulkLoads > 0 && core.manifest.indexType === 'sable' && !core.closing;
}

/**
 * Copies a frozen partition's rows (in half precision, as its build would keep them) into the
 * gathered partition and drops it, in one writer turn: LMDB moves its ids to the gathered
 * partition's pending list in one transaction, so a crash leaves each row in one of the two.
 * Until the source leaves the list a search may meet a row in both: searches planned while a
 * partition gathers answer each id once (search.ts, `distinct`).
 */
export function gather(core: DatasetCore, p: Partition): Promise<void> {
  const work = (async () => {
    await native.segmentCompactRows(p.handle, core.manifest.indexType);
    await core.exclusive(async () => {
      const { storage, uid } = core;
      if (core.gathered && core.gathered.rows + p.rows > ONE_PARTITION_MAX_ROWS) sealGathered(core);
      const into = core.gathered ?? (core.gathered = await startGathered(core));
      await native.segmentAbsorb(into.handle, p.handle);
      const ids = native.segmentLiveIds(p.handle);
      await storage.write(() => {
        for (const id of ids) storage.pending.put([uid, into.pid], id);
        storage.pending.remove([uid, p.pid]);
        storage.parts.remove([uid, p.pid]);
        storage.removeRange(storage.tombs, [uid, p.pid]);
      });
      core.partitions = core.partitions.filter((x) => x !== p);
      core.retirement.retire(p.handle);
    });
  })();
  core.gatherings.add(work);
  const done = () => void core.gatherings.delete(work);
  work.then(done, done);
  return work;
}

/** Inside a writer turn: the gathered partition takes no more rows, and is indexed like any other. */
export function sealGathered(core: DatasetCore): void {
  const p = core.gathered;
  if (!p) return;
  core.gathered = null;
  native.segmentSeal(p.handle);
  core.track(sealThenCompact(core, p));
}

/** A new gathered partition, recorded in LMDB before it takes rows, with room for the rows announced. */
async function startGathered(core: DatasetCore): Promise<Partition> {
  const pid = core.manifest.nextPartition++;
  const rec: PartitionRecord = { pid, state: 'growing', gathering: true, createdAt: Date.now() };
  await core.storage.write(() => {
    core.storage.catalog.put(core.name, core.manifest);
    core.storage.parts.put([core.uid, pid], rec);
  });
  const reserve = Math.min(core.bulkRowsExpected, ONE_PARTITION_MAX_ROWS);
  const p = new Partition(pid, native.segmentCreate(core.dim, core.manifest.metric, reserve > 0 ? reserve : undefined), 'sealing');
  core.partitions.push(p);
  return p;
}

/**
 * Rows to reserve in a new growing partition: what the promotion policy lets it reach, up to
 * 256 MB of float rows. Appending then copies each row once, where a growing array copied
 * everything at each doubling (a third of a bulk load's time on the service's thread).
 */
function growingReserve(core: DatasetCore): number {
  return Math.min(core.manifest.promotion.max_buffer_vectors, Math.floor((256 * 2 ** 20) / (4 * core.dim)));
}

/**
 * Indexes a frozen partition, or, when the compaction would fold it into the largest index at
 * once (an extension: its rows assigned to that index's lists), leaves it to that fold: its own
 * build would train lists only for the fold to drop them. Under the soak's writes that build
 * (k-means over 20k 768-d rows, then its calibration and snapshot) was most of the background
 * CPU, every promotion. Until the fold, the partition is searched through the largest index's
 * lists (shared-lists.ts), and LMDB keeps it as frozen: a restart seals it.
 */
async function sealOrFold(core: DatasetCore, p: Partition): Promise<void> {
  await native.segmentCompactRows(p.handle, core.manifest.indexType);
  if (foldsAtOnce(core, p)) {
    p.awaitingFold = true;
    core.lastSealAt = Date.now();
    compactSoon(core);
    return;
  }
  await sealThenCompact(core, p);
}

/**
 * Promotes the growing partition once its oldest row is older than the policy allows; once no
 * partition was sealed for as long, folds the tail partitions (compaction.ts) the size rules
 * left beside the largest.
 */
export function startAgeTimer(core: DatasetCore): void {
  const age = core.manifest.promotion.max_buffer_age_ms;
  const every = Math.max(50, Math.min(1000, age / 4));
  core.ageTimer = setInterval(() => {
    const since = core.growing.firstWriteAt;
    if (since !== null && Date.now() - since >= age) {
      void core.exclusive(() => promoteLocked(core)).catch((e: Error) => core.fail(e));
    } else if (since === null && core.lastSealAt > 0 && Date.now() - core.lastSealAt >= age) {
      core.lastSealAt = 0;
      compactSoon(core, true);
    }
  }, every);
  core.ageTimer.unref();
}

/** Loads a dataset's partitions: snapshots of sealed ones (reconciled), growing ones from LMDB. */
export async function loadPartitions(core: DatasetCore): Promise<void> {
  const { storage, uid } = core;
  for (const { key, value } of storage.dict.getRange({ start: [uid], end: [uid, '\uffff'] })) {
    const [, column, str] = key as [number, string, string];
    let d = core.ctx.dictionaries.get(column);
    if (!d) core.ctx.dictionaries.set(column, (d = new Dictionary()));
    d.restore(str, value);
  }
  const records = [...storage.parts.getRange({ start: [uid], end: [uid, '\uffff'] })].map((e) => e.value);
  await dropOrphans(core, records);
  // A bulk load's gathered partition is sealed below, like any partition frozen before the stop.
  const growingRecords = records.filter((r) => r.state === 'growing' && !r.gathering);
  for (const rec of records) {
    if (rec.state === 'sealed') {
      const opened = await openSealed(core, rec);
      const p = new Partition(rec.pid, opened.handle, 'sealed');
      p.trainedRows = opened.trainedRows;
      core.partitions.push(p);
    } else {
      const p = new Partition(rec.pid, native.segmentCreate(core.dim, core.manifest.metric, growingReserve(core)), 'growing');
      await appendFromStorage(core, p.handle, [...storage.pending.getValues([uid, rec.pid])]);
      core.partitions.push(p);
    }
  }
  const sealedTimes = records.filter((r) => r.state === 'sealed').map((r) => r.createdAt);
  if (sealedTimes.length > 0) {
    core.builtAt = new Date(Math.max(...sealedTimes)).toISOString();
    // Tails left by a process that stopped fold once this one has been idle for the age.
    core.lastSealAt = Date.now();
  }
  const current = growingRecords.at(-1);
  if (current) {
    core.growing = core.partitions.find((p) => p.pid === current.pid)!;
    if (core.growing.rows > 0) core.growing.firstWriteAt = Date.now();
  } else {
    await startGrowing(core);
  }
  // Partitions frozen before the process stopped finish sealing now.
  for (const p of core.partitions) {
    if (p.state === 'growing' && p !== core.growing) {
      native.segmentSeal(p.handle);
      p.state = 'sealing';
      core.track(sealThenCompact(core, p));
    }
  }
  shareLists(core);
}

/**
 * A sealed partition holds exactly its members (see `members`); its snapshot is a cache of
 * them. A snapshot row outside the members is not served (format 2 snapshots kept rows deleted
 * while their partition was growing, and brought them back after a restart); a member the
 * snapshot lacks means the snapshot is wrong, and it is rebuilt from LMDB. Resolves with the
 * segment and the rows its index was trained on.
 */
async function openSealed(core: DatasetCore, rec: PartitionRecord): Promise<{ handle: number; trainedRows: number }> {
  const { storage, uid } = core;
  const ids = members(core, rec);
  const loaded = await loadSnapshot(core, rec);
  if (loaded !== null) {
    const { removed, missing } = native.segmentReconcile(loaded, ids);
    if (missing === 0) {
      core.repairedRows += removed;
      // A schema change retypes the columns in memory; a snapshot written before it is retyped here.
      const stale = staleColumns(core, loaded);
      if (stale) {
        const codes = columnsFromStorage(core, loaded);
        await storage.write(() => {
          for (const [column, value, code] of codes) storage.dict.put([uid, column, value], code);
        });
      }
      if (removed > 0 || stale) {
        const checksum = await native.segmentSave(loaded, storage.snapshotPath(rec.snapshot!));
        await storage.write(() => storage.parts.put([uid, rec.pid], { ...rec, checksum }));
      }
      return { handle: loaded, trainedRows: rec.trainedRows ?? native.segmentStats(loaded).rows };
    }
    native.segmentRelease(loaded);
  }
  const handle = native.segmentCreate(core.dim, core.manifest.metric);
  await appendFromStorage(core, handle, Array.from(ids));
  await core.build(handle);
  if (storage.durable) {
    const file = rec.snapshot ?? `${uid}-${rec.pid}.seg`;
    const checksum = await native.segmentSave(handle, storage.snapshotPath(file));
    await storage.write(() => storage.parts.put([uid, rec.pid], { ...rec, snapshot: file, checksum, trainedRows: ids.length }));
  }
  core.rebuiltSnapshots++;
  return { handle, trainedRows: ids.length };
}

/** The snapshot's segment, or null when it is missing or corrupt. */
async function loadSnapshot(core: DatasetCore, rec: PartitionRecord): Promise<number | null> {
  if (!rec.snapshot) return null;
  try {
    return await native.segmentLoad(core.storage.snapshotPath(rec.snapshot), rec.checksum);
  } catch (e) {
    const code = (e as SableError).code;
    if (code === 'snapshot_missing' || code === 'snapshot_corrupt') return null;
    throw e;
  }
}

/** The ids a sealed partition holds: those recorded when it was sealed, minus its tombstones. */
function members(core: DatasetCore, rec: PartitionRecord): Float64Array {
  const { storage, uid } = core;
  const ids = storage.sealedIds(uid, rec);
  const tombs = new Set<number>();
  for (const key of storage.keys(storage.tombs, [uid, rec.pid])) tombs.add(key[2] as number);
  return tombs.size === 0 ? ids : ids.filter((id) => !tombs.has(id));
}

/**
 * Tombstones and snapshot files of partitions that have no record: a compaction that did not
 * commit before the process stopped leaves them.
 */
async function dropOrphans(core: DatasetCore, records: PartitionRecord[]): Promise<void> {
  const { storage, uid } = core;
  const known = new Set(records.map((r) => r.pid));
  const orphans = new Set<number>();
  for (const key of storage.keys(storage.tombs, [uid])) {
    if (!known.has(key[1] as number)) orphans.add(key[1] as number);
  }
  if (orphans.size > 0) {
    await storage.write(() => {
      for (const pid of orphans) storage.removeRange(storage.tombs, [uid, pid]);
    });
  }
  if (!storage.durable) return;
  const snapshots = new Set(records.map((r) => r.snapshot).filter((f) => f !== undefined));
  for (const file of snapshotFiles(core)) if (!snapshots.has(file)) rmSync(storage.snapshotPath(file), { force: true });
}

/** Appends the stored vectors and metadata of `ids` (those still stored) to a segment. */
async function appendFromStorage(core: DatasetCore, handle: number, ids: number[]): Promise<void> {
  const { storage, uid, dim } = core;
  for (let start = 0; start < ids.length; start += REBUILD_CHUNK) {
    const chunk = ids.slice(start, start + REBUILD_CHUNK);
    const present: number[] = [];
    const rows = new Float32Array(chunk.length * dim);
    const metas: (Metadata | undefined)[] = [];
    for (const id of chunk) {
      const bytes = storage.vectors.get([uid, id]);
      if (!bytes) continue;
      rows.set(bytesToFloat32(bytes), present.length * dim);
      metas.push(storage.meta.get([uid, id]));
      present.push(id);
    }
    const columns = columnBatches(core.ctx, metas);
    native.segmentAppend(handle, Float64Array.from(present), rows.subarray(0, present.length * dim), columns.batches);
  }
}

/**
 * Rebuilds a segment's columns from the stored metadata with the dataset's column types;
 * returns the dictionary codes it assigned (to be stored by the caller).
 */
export function columnsFromStorage(core: DatasetCore, handle: number): [string, string, number][] {
  const rowIds = native.segmentRowIds(handle);
  const metas = Array.from(rowIds, (id) => core.storage.meta.get([core.uid, id]));
  const columns = columnBatches(core.ctx, metas);
  native.segmentReplaceColumns(handle, columns.batches, rowIds.length);
  return columns.newCodes;
}

/** Whether a segment's columns were typed before a schema change it has not seen. */
function staleColumns(core: DatasetCore, handle: number): boolean {
  return Object.entries(native.segmentColumnTypes(handle)).some(([name, type]) => core.manifest.columns[name] !== type);
}

/** Stops timers and waits for every write and background build; the dataset is unusable afterwards. */
export async function closePartitions(core: DatasetCore): Promise<void> {
  if (core.closed) return;
  core.closing = true;
  if (core.ageTimer) clearInterval(core.ageTimer);
  for (const release of [...core.buildHolds]) release();
  await core.quiesce();
  core.closed = true;
  core.keyword = null;
  core.keywordBuild = null;
  for (const p of core.partitions) native.segmentRelease(p.handle);
  core.partitions = [];
}

/** Removes every vector, partition and snapshot of the dataset. */
export async function destroyPartitions(core: DatasetCore): Promise<void> {
  const { storage, uid } = core;
  await closePartitions(core);
  await storage.write(() => {
    for (const db of [storage.vectors, storage.meta, storage.parts, storage.partIds, storage.pending, storage.tombs, storage.dict]) {
      storage.removeRange(db as never, [uid] as Key);
    }
    storage.catalog.remove(core.name);
  });
  // Every file of the dataset, also those of partitions a compaction made or dropped meanwhile.
  if (storage.durable) for (const file of snapshotFiles(core)) rmSync(storage.snapshotPath(file), { force: true });
}
