/**
 * Upserts and deletes. Each commits to LMDB first (the acknowledgement means durable), in the
 * same transaction as the partition membership it changes, then updates the segments: new rows
 * go to the growing partition, replaced and deleted rows are tombstoned where they lived.
 * Concurrent writes share their commits (write-groups.ts).
 */
import { invalid } from '../../errors/codes.js';
import { columnBatches, TEXT_FIELD } from '../columns.js';
import { native } from '../native.js';
import type { Partition } from '../partition.js';
import type { Metadata, Scalar } from '../types.js';
import { noteRemovals } from './compaction.js';
import type { DatasetCore } from './core.js';
import { BULK_SLICE_BYTES, submitWrite, TRANSACTION_SLICE_BYTES, type StagedWrite } from './write-groups.js';

type Located = { partition: Partition; mask: Uint8Array }[];

/**
 * Scores are computed in float32: past this squared length a distance or a dot product
 * overflows to Infinity, a score that ranks nothing (and that JSON shows as null).
 */
const MAX_SQUARED_LENGTH = 1e37;

/**
 * Refuses the `dim` values of `v` from `at` when one is not finite or together they are too long:
 * the rule, in double precision, for a query and for each row checkRows finds.
 */
export function checkValues(v: Float32Array, at: number, dim: number, what: string): void {
  let squares = 0;
  for (let i = at; i < at + dim; i++) {
    if (!Number.isFinite(v[i])) throw invalid(`${what} holds a non-finite value`);
    squares += v[i] * v[i];
  }
  if (squares > MAX_SQUARED_LENGTH) throw invalid(`${what} is too long to score: its squared length ${squares.toExponential(2)} is over ${MAX_SQUARED_LENGTH}`);
}

/**
 * Refuses the first row of a batch that checkValues refuses. The native pass finds the rows that
 * may fail (it sums squares in float32, in lanes: from a thousandth below the limit it reports a
 * row); checkValues decides each.
 */
function checkRows(vectors: Float32Array, ids: ArrayLike<number>, dim: number): void {
  for (let from = 0; from < ids.length; ) {
    const r = native.firstSuspectRow(vectors, dim, from, MAX_SQUARED_LENGTH * 0.999);
    if (r < 0) return;
    checkValues(vectors, r * dim, dim, `vector ${ids[r]}`);
    from = r + 1;
  }
}

export interface UpsertOptions {
  /** A bulk load's batch: committed in slices of BULK_SLICE_BYTES instead of TRANSACTION_SLICE_BYTES. */
  bulk?: boolean;
}

/** Inserts or replaces vectors; resolves once they are durable and searchable. */
export async function upsert(
  core: DatasetCore,
  ids: number[] | Float64Array,
  vectors: Float32Array,
  metadata?: (Metadata | undefined | null)[],
  options: UpsertOptions = {},
): Promise<{ upserted: number }> {
  core.checkOpen();
  const dim = core.dim;
  if (!Array.isArray(ids) && !(ids instanceof Float64Array)) throw invalid('ids must be an array of integers');
  if (!(vectors instanceof Float32Array)) throw invalid('vectors must be a Float32Array');
  if (vectors.length !== ids.length * dim) {
    throw invalid(`vectors hold ${vectors.length} values; ${ids.length} ids of dimension ${dim} need ${ids.length * dim}`);
  }
  if (metadata !== undefined && (!Array.isArray(metadata) || metadata.length !== ids.length)) {
    throw invalid('metadata must be an array with one entry per id');
  }
  checkIds(ids);
  checkRows(vectors, ids, dim);
  metadata?.forEach((m, i) => checkMetadata(ids[i], m));
  const rows = lastRows(ids, vectors, metadata ?? [], dim);
  const n = rows.ids.length;
  for (const slice of transactionSlices(rows, dim, options.bulk ? BULK_SLICE_BYTES : TRANSACTION_SLICE_BYTES)) {
    await submitWrite(core, { ids: slice.ids, rows: slice.ids.length, stage: () => stageUpsert(core, slice) });
  }
  return { upserted: n };
}

/**
 * The rows in slices of about `sliceBytes` (views, no copies), committed one after another: a
 * crash during a large upsert keeps whole slices, in order.
 */
function transactionSlices(rows: Rows, dim: number, sliceBytes: number): Rows[] {
  const n = rows.ids.length;
  const slices: Rows[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    bytes += dim * 4 + approximateBytes(rows.metas[i]);
    if (bytes >= sliceBytes || i === n - 1) {
      slices.push({
        ids: rows.ids.subarray(start, i + 1),
        vectors: rows.vectors.subarray(start * dim, (i + 1) * dim),
        metas: rows.metas.slice(start, i + 1),
      });
      start = i + 1;
      bytes = 0;
    }
  }
  return slices;
}

/** A metadata object's size as stored, near enough to bound a transaction. */
function approximateBytes(m: Metadata | undefined): number {
  if (!m) return 0;
  let bytes = 0;
  for (const key in m) {
    const v = m[key];
    bytes += key.length + 9 + (typeof v === 'string' ? v.length : 0);
  }
  return bytes;
}

/** Deletes vectors by id; resolves with how many existed. */
export async function deleteIds(core: DatasetCore, ids: number[]): Promise<number> {
  core.checkOpen();
  if (!Array.isArray(ids)) throw invalid('ids must be an array of integers');
  checkIds(ids);
  const unique = Float64Array.from(new Set(ids));
  return submitWrite(core, { ids: unique, rows: 0, stage: () => stageDelete(core, unique) });
}

function stageDelete(core: DatasetCore, unique: Float64Array): StagedWrite {
  const { storage, uid } = core;
  const located = locate(core, unique);
  return {
    record() {
      for (const id of unique) {
        storage.vectors.remove([uid, id]);
        storage.meta.remove([uid, id]);
      }
      recordRemovals(core, located, unique, null);
    },
    apply() {
      if (core.keyword) for (const id of unique) core.keyword.remove(id);
      return applyRemovals(core, located, unique);
    },
  };
}

interface Rows {
  ids: Float64Array;
  vectors: Float32Array;
  metas: (Metadata | undefined)[];
}

/** The rows an upsert writes: the last occurrence of each id (as successive calls would leave). */
function lastRows(ids: number[] | Float64Array, vectors: Float32Array, metadata: (Metadata | undefined | null)[], dim: number): Rows {
  const keep = lastOccurrences(ids);
  const n = keep ? keep.length : ids.length;
  // Ids as one typed array (the caller's own when it passed one and none repeats).
  const idArray = !keep && ids instanceof Float64Array ? ids : new Float64Array(n);
  let rows = vectors;
  const metas: (Metadata | undefined)[] = new Array(n);
  if (keep) {
    rows = new Float32Array(n * dim);
    for (let i = 0; i < n; i++) {
      const src = keep[i]!;
      idArray[i] = ids[src]!;
      rows.set(vectors.subarray(src * dim, (src + 1) * dim), i * dim);
      metas[i] = metadata[src] ?? undefined;
    }
  } else {
    for (let i = 0; i < n; i++) {
      if (idArray !== ids) idArray[i] = ids[i]!;
      metas[i] = metadata[i] ?? undefined;
    }
  }
  return { ids: idArray, vectors: rows, metas };
}

function stageUpsert(core: DatasetCore, { ids, vectors, metas }: Rows): StagedWrite {
  const { dim, storage, uid } = core;
  const n = ids.length;
  const located = locate(core, ids);
  const columns = columnBatches(core.ctx, metas);
  const growing = core.growing;
  const existed = heldSomewhere(located, n);
  const vectorBuffer = vectors.buffer;
  return {
    record() {
      for (let i = 0; i < n; i++) {
        const id = ids[i]!;
        storage.vectors.put([uid, id], new Uint8Array(vectorBuffer, vectors.byteOffset + i * dim * 4, dim * 4));
        const m = metas[i];
        if (m && hasKeys(m)) storage.meta.put([uid, id], m);
        // Only a replaced vector can have metadata to forget.
        else if (existed[i]) storage.meta.remove([uid, id]);
        storage.pending.put([uid, growing.pid], id);
      }
      recordRemovals(core, located, ids, growing);
      if (columns.newTypes.length > 0) storage.catalog.put(core.name, core.manifest);
      for (const [column, value, code] of columns.newCodes) storage.dict.put([uid, column, value], code);
    },
    apply() {
      applyRemovals(core, located, ids);
      native.segmentAppend(growing.handle, ids, vectors, columns.batches);
      if (core.keyword) {
        for (let i = 0; i < n; i++) {
          const text = metas[i]?.[TEXT_FIELD];
          if (typeof text === 'string' && text !== '') core.keyword.add(ids[i], text);
          else core.keyword.remove(ids[i]);
        }
      }
      growing.firstWriteAt ??= Date.now();
      return n;
    },
  };
}

/**
 * Indexes of the last occurrence of each id, in order, when some id repeats (the last one wins,
 * as successive calls would); null when none repeats, found by sorting a copy, without a Map.
 */
function lastOccurrences(ids: ArrayLike<number>): number[] | null {
  const sorted = Float64Array.from(ids).sort();
  let repeats = false;
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] === sorted[i - 1]) {
      repeats = true;
      break;
    }
  }
  if (!repeats) return null;
  const last = new Map<number, number>();
  for (let i = 0; i < ids.length; i++) last.set(ids[i]!, i);
  return [...last.values()].sort((a, b) => a - b);
}

/** Per row: whether some partition held its id before this write. */
function heldSomewhere(located: Located, n: number): Uint8Array {
  const held = new Uint8Array(n);
  for (const { mask } of located) for (let i = 0; i < n; i++) held[i] |= mask[i]!;
  return held;
}

function hasKeys(m: Metadata): boolean {
  for (const _ in m) return true;
  return false;
}

/** For each partition (and a compaction target), which of `ids` it holds now. */
function locate(core: DatasetCore, ids: Float64Array): Located {
  return core.allPartitions().map((partition) => ({ partition, mask: native.segmentContains(partition.handle, ids) }));
}

/**
 * Inside the write transaction that acknowledges a delete or a replacement: the id leaves the
 * LMDB membership of every partition that holds it. That membership is what a partition is
 * after a restart: a partition not sealed yet holds its `pending` ids, a sealed one the ids
 * recorded at its seal minus its `tombs`. So a growing partition loses the pending entry, and
 * any other (sealing, sealed, being rebuilt, a compaction's target) gets a tombstone, plus the
 * pending entry's removal while its seal has not committed.
 */
function recordRemovals(core: DatasetCore, located: Located, ids: Float64Array, rewrittenIn: Partition | null) {
  const { storage, uid } = core;
  for (const { partition, mask } of located) {
    for (let i = 0; i < ids.length; i++) {
      if (!mask[i]) continue;
      if (partition.state === 'growing') {
        // A rewrite into the same growing partition keeps its membership key.
        if (partition !== rewrittenIn) storage.pending.remove([uid, partition.pid], ids[i]);
      } else {
        storage.tombs.put([uid, partition.pid, ids[i]], true);
        if (partition.state === 'sealing') storage.pending.remove([uid, partition.pid], ids[i]);
      }
    }
  }
}

/** Tombstones the rows in the segments; returns how many ids were live in the dataset. */
function applyRemovals(core: DatasetCore, located: Located, ids: Float64Array): number {
  const removed = new Set<number>();
  const touched: Partition[] = [];
  for (const { partition, mask } of located) {
    const hit: number[] = [];
    for (let i = 0; i < ids.length; i++) if (mask[i]) hit.push(ids[i]);
    if (hit.length === 0) continue;
    native.segmentRemove(partition.handle, Float64Array.from(hit));
    touched.push(partition);
    if (partition !== core.compaction?.target) for (const id of hit) removed.add(id);
  }
  noteRemovals(core, touched);
  return removed.size;
}

function checkIds(ids: ArrayLike<number>): void {
  for (let i = 0; i < ids.length; i++) {
    if (!Number.isSafeInteger(ids[i])) throw invalid(`id ${String(ids[i])} is not a safe integer`);
  }
}

function checkMetadata(id: number, m: Metadata | undefined | null): void {
  if (m === undefined || m === null) return;
  if (typeof m !== 'object' || Array.isArray(m)) throw invalid(`metadata of ${id} must be an object`);
  for (const [k, v] of Object.entries(m)) {
    if (!isScalar(v)) throw invalid(`metadata '${k}' of ${id} must be a string, number, boolean or null`);
  }
}

function isScalar(v: unknown): v is Scalar {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}
