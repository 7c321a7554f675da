/**
 * One row group of a vectors file as flat typed arrays: vectors (float32, rows x dim), ids
 * (float64) and metadata columns, checked as they are copied out of the Arrow buffers (the
 * dimension of every row, finite values, integer ids). No per-row objects for vectors or ids.
 */
import * as arrow from 'apache-arrow';
import { ShapeError, type FileShape, type MetadataKind } from './shape.js';

export interface MetadataColumn {
  name: string;
  kind: MetadataKind;
  /** number and bigint kinds (as numbers), bool as 0/1. */
  numbers?: Float64Array;
  strings?: (string | null)[];
  /** 1 where the row has a value; absent when no row is null. */
  valid?: Uint8Array;
}

export interface GroupData {
  rows: number;
  ids: Float64Array;
  vectors: Float32Array;
  metadata: MetadataColumn[];
}

export function groupData(table: arrow.Table, shape: FileShape, dim: number, firstRow: number): GroupData {
  const rows = table.numRows;
  const vectors = new Float32Array(rows * dim);
  const ids = new Float64Array(rows);
  let at = 0;
  for (const batch of table.batches) {
    copyVectors(batch.getChild(shape.vectorColumn)!.data[0], batch.numRows, dim, vectors, at, firstRow);
    if (shape.idColumn) copyIds(batch.getChild(shape.idColumn)!.data[0], batch.numRows, ids, at, firstRow);
    else ids.set(rowOffsetIds(batch.numRows, firstRow + at), at);
    at += batch.numRows;
  }
  const metadata = shape.metadata.map(({ name, kind }) => metadataColumn(table.getChild(name)!, name, kind, rows));
  return { rows, ids, vectors, metadata };
}

/**
 * The buffers behind a group's arrays, each once, to transfer with it: every array is allocated
 * here for that group alone, so the Parquet thread may give them away instead of having the
 * structured clone copy ~15 MB per 5,000 x 768 group twice (serialised, then copied out again on
 * the receiving thread). Measured on the 100k x 768 file (the loader with a no-op upsert):
 * 2.4 s of CPU with the copies, 2.1 s transferred.
 */
export function groupTransferables(group: GroupData): ArrayBuffer[] {
  const buffers = new Set<ArrayBufferLike>([group.ids.buffer, group.vectors.buffer]);
  for (const m of group.metadata) {
    if (m.numbers) buffers.add(m.numbers.buffer);
    if (m.valid) buffers.add(m.valid.buffer);
  }
  // Only an ArrayBuffer can be transferred.
  return [...buffers].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer);
}

/** Ids of a file without an id column: row offsets. */
export function rowOffsetIds(rows: number, firstRow: number): Float64Array {
  const ids = new Float64Array(rows);
  for (let r = 0; r < rows; r++) ids[r] = firstRow + r;
  return ids;
}

/** A vector value that is not finite (or a double past float32's range), as a file's problem. */
export function nonFinite(row: number, value: number, position: number): ShapeError {
  return new ShapeError('non_finite_value', `row ${row} holds a non-finite value (${value}) at position ${position}`);
}

/** An id as a number, refused past the safe integer range (2^53). */
export function safeId(v: number | bigint, row: number): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (!Number.isSafeInteger(n) || (typeof v === 'bigint' && BigInt(n) !== v)) {
    throw new ShapeError('invalid_id', `row ${row} has id ${String(v)}, beyond the safe integer range (2^53)`);
  }
  return n;
}

function copyVectors(data: arrow.Data, rows: number, dim: number, out: Float32Array, at: number, firstRow: number): void {
  if (data.nullCount > 0) {
    for (let r = 0; r < rows; r++) if (!data.getValid(r)) throw new ShapeError('null_vector', `row ${firstRow + at + r} has no vector`);
  }
  const child = data.children[0];
  if (child.nullCount > 0) throw new ShapeError('non_finite_value', `a vector near row ${firstRow + at} holds a null component`);
  const values = child.values as Float32Array | Float64Array;
  const fixed = arrow.DataType.isFixedSizeList(data.type);
  const offsets = fixed ? null : (data.valueOffsets as Int32Array);
  for (let r = 0; r < rows; r++) {
    let start: number;
    if (offsets) {
      start = offsets[data.offset + r];
      const length = offsets[data.offset + r + 1] - start;
      if (length !== dim) throw new ShapeError('dimension_mismatch', `row ${firstRow + at + r} has ${length} values; the dataset dimension is ${dim}`);
    } else {
      start = (data.offset + r) * dim;
    }
    start += child.offset;
    const dst = (at + r) * dim;
    for (let j = 0; j < dim; j++) {
      const v = values[start + j];
      // A float64 beyond float32's range becomes Infinity when stored, and is refused with the
      // rest: the check reads the stored value back (an assignment's value is its right side).
      out[dst + j] = v;
      const f = out[dst + j];
      if (f - f !== 0) throw nonFinite(firstRow + at + r, v, j);
    }
  }
}

function copyIds(data: arrow.Data, rows: number, out: Float64Array, at: number, firstRow: number): void {
  const values = data.values as ArrayLike<number | bigint>;
  for (let r = 0; r < rows; r++) {
    if (data.nullCount > 0 && !data.getValid(r)) throw new ShapeError('invalid_id', `row ${firstRow + at + r} has no id`);
    out[at + r] = safeId(values[data.offset + r], firstRow + at + r);
  }
}

function metadataColumn(vector: arrow.Vector, name: string, kind: MetadataKind, rows: number): MetadataColumn {
  const col: MetadataColumn = { name, kind };
  if (vector.nullCount > 0) {
    col.valid = new Uint8Array(rows);
    for (let r = 0; r < rows; r++) col.valid[r] = vector.isValid(r) ? 1 : 0;
  }
  if (kind === 'string') {
    col.strings = new Array(rows);
    for (let r = 0; r < rows; r++) {
      const v = vector.get(r);
      col.strings[r] = v === null || v === undefined ? null : String(v);
    }
    return col;
  }
  col.numbers = new Float64Array(rows);
  if (kind === 'bool') {
    for (let r = 0; r < rows; r++) col.numbers[r] = vector.get(r) ? 1 : 0;
    return col;
  }
  const values = vector.toArray() as ArrayLike<number | bigint>;
  for (let r = 0; r < rows; r++) col.numbers[r] = Number(values[r] ?? 0);
  return col;
}
