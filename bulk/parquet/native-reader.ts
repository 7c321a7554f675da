/**
 * A row group of a vectors file decoded by the native core (engine's decodeParquetChunk), column
 * chunk by column chunk, into the GroupData that group.ts builds from parquet-wasm's Arrow
 * tables, with the same checks (dimension of every row, finite values, integer ids). It reads
 * only what vector files hold: float/double lists, int32/int64 ids, scalar numbers, strings and
 * booleans, in the encodings and codecs the core reads (native/core/parquet/column_chunk.h:
 * plain, dictionary and delta; uncompressed, Snappy, ZSTD, GZIP). Anything else is refused
 * with NativeUnsupported before or while decoding, and the caller falls back to parquet-wasm.
 */
import { decodeParquetChunk, SableError, type NativeParquetChunk, type NativeParquetChunkSpec } from '../../engine/index.js';
import { nonFinite, rowOffsetIds, safeId, type GroupData, type MetadataColumn } from './group.js';
import { chunkStart, rowGroupRows, type Footer, type RandomAccess } from './row-group-file.js';
import { ShapeError, type FileShape, type MetadataKind } from './shape.js';
import type { ListValue, Struct } from './thrift-compact.js';

/** The native reader does not read this file or column: decode it with parquet-wasm instead. */
export class NativeUnsupported extends Error {}

/** What one chunk may allocate while decoding, unless the caller says otherwise. */
const DEFAULT_CHUNK_LIMIT_BYTES = 1 << 30;

const enum Physical {
  Boolean = 0,
  Int32 = 1,
  Int64 = 2,
  Float = 4,
  Double = 5,
  ByteArray = 6,
}

/** A leaf of the schema, with the definition level reached at each node of its path. */
export interface Leaf {
  path: string[];
  physical: number;
  typeLength: number;
  maxDef: number;
  maxRep: number;
  /** Definition level once each node of the path is defined. */
  defAt: number[];
  /** 0 required, 1 optional, 2 repeated, per node of the path. */
  repetition: number[];
  convertedType: number | undefined;
  logicalType: Struct | undefined;
}

const num = (s: Struct, id: number): number | undefined => {
  const v = s.get(id)?.value;
  return v === undefined ? undefined : Number(v);
};
const text = (v: unknown): string => new TextDecoder().decode(v as Uint8Array);

/** The schema's leaves in order (FileMetaData.schema is the tree flattened depth first). */
export function schemaLeaves(footer: Footer): Leaf[] {
  const items = ((footer.meta.get(2)?.value as ListValue | undefined)?.items ?? []) as Struct[];
  if (items.length === 0) throw new Error('the footer has no schema');
  const leaves: Leaf[] = [];
  let at = 1;
  const walk = (count: number, path: string[], defAt: number[], repetition: number[], def: number, rep: number, depth: number): void => {
    if (depth > 32) throw new NativeUnsupported('the schema nests deeper than 32 levels');
    for (let k = 0; k < count; k++) {
      const el = items[at++];
      if (!el) throw new Error('the footer schema declares more children than it holds');
      const r = num(el, 3) ?? 0;
      const d = def + (r === 0 ? 0 : 1);
      const p = [...path, text(el.get(4)?.value)];
      const da = [...defAt, d];
      const ra = [...repetition, r];
      const children = num(el, 5) ?? 0;
      if (children > 0) walk(children, p, da, ra, d, rep + (r === 2 ? 1 : 0), depth + 1);
      else {
        leaves.push({
          path: p, physical: num(el, 1) ?? -1, typeLength: num(el, 2) ?? 0, maxDef: d, maxRep: rep + (r === 2 ? 1 : 0),
          defAt: da, repetition: ra, convertedType: num(el, 6), logicalType: el.get(10)?.value as Struct | undefined,
        });
      }
    }
  };
  walk(num(items[0], 5) ?? 0, [], [], [], 0, 0, 0);
  return leaves;
}

interface ChunkRef {
  meta: Struct;
  start: number;
  length: number;
}

function chunkOf(footer: Footer, group: number, path: string[]): ChunkRef {
  const g = footer.rowGroups[group];
  const key = path.join('\u0000');
  for (const c of (g.get(1)!.value as ListValue).items as Struct[]) {
    const m = c.get(3)?.value as Struct | undefined;
    if (!m) throw new NativeUnsupported('a column chunk has no metadata (external or encrypted chunks)');
    const p = ((m.get(3)?.value as ListValue | undefined)?.items ?? []).map(text).join('\u0000');
    if (p !== key) continue;
    return { meta: m, start: Number(chunkStart(m)), length: num(m, 7)! };
  }
  throw new Error(`row group ${group} has no chunk for column ${path.join('.')}`);
}

interface ReadChunk {
  leaf: Leaf;
  bytes: Uint8Array;
  spec: NativeParquetChunkSpec;
}

async function readChunk(file: RandomAccess, footer: Footer, group: number, leaf: Leaf, limitBytes: number): Promise<ReadChunk> {
  const { meta, start, length } = chunkOf(footer, group, leaf.path);
  if (num(meta, 1) !== leaf.physical) throw new Error(`column ${leaf.path.join('.')}: the chunk's type differs from the schema's`);
  if (!(start >= 4 && length >= 0 && start + length <= file.size - 8)) throw new Error(`column ${leaf.path.join('.')}: its chunk lies outside the file`);
  if (length > limitBytes) throw new NativeUnsupported(`column ${leaf.path.join('.')}: a chunk of ${length} bytes passes the limit of ${limitBytes}`);
  const spec: NativeParquetChunkSpec = {
    physicalType: leaf.physical,
    codec: num(meta, 4)!,
    maxDefinitionLevel: leaf.maxDef,
    maxRepetitionLevel: leaf.maxRep,
    numValues: num(meta, 5)!,
    uncompressedSize: num(meta, 6)!,
    typeLength: leaf.typeLength,
    limitBytes,
  };
  return { leaf, bytes: await file.read(start, start + length), spec };
}

function decodeChunk({ leaf, bytes, spec }: ReadChunk): NativeParquetChunk {
  try {
    return decodeParquetChunk(bytes, spec);
  } catch (e) {
    if (e instanceof SableError && e.code === 'unsupported') throw new NativeUnsupported(`column ${leaf.path.join('.')}: ${e.message}`);
    if (e instanceof SableError) throw new Error(`column ${leaf.path.join('.')}: ${e.message}`);
    throw e;
  }
}

// ConvertedType: UINT_8..UINT_64 are 11..14; INT_8..INT_64 15..18; UTF8 0, ENUM 4, JSON 19.
const UNSIGNED = new Set([11, 12, 13, 14]);

function integerSigned(leaf: Leaf): boolean {
  if (leaf.convertedType !== undefined && UNSIGNED.has(leaf.convertedType)) return false;
  const int = leaf.logicalType?.get(10)?.value as Struct | undefined; // LogicalType.INTEGER
  return int === undefined || int.get(2)?.value !== false;
}

function leafFor(leaves: Leaf[], name: string): Leaf[] {
  return leaves.filter((l) => l.path[0] === name);
}

function scalarLeaf(leaves: Leaf[], name: string): Leaf {
  const mine = leafFor(leaves, name);
  if (mine.length !== 1 || mine[0].path.length !== 1 || mine[0].maxRep !== 0 || mine[0].maxDef > 1) {
    throw new NativeUnsupported(`column ${name} is not a flat scalar column`);
  }
  return mine[0];
}

/** Row group `group` of the file as GroupData, every column chunk decoded natively. */
export async function readGroupNative(
  file: RandomAccess, footer: Footer, shape: FileShape, dim: number, group: number, firstRow: number,
  limitBytes = DEFAULT_CHUNK_LIMIT_BYTES,
): Promise<GroupData> {
  if (group < 0 || group >= footer.rowGroups.length) throw new Error(`row group ${group} is out of range`);
  const rows = rowGroupRows(footer.rowGroups[group]);
  const leaves = schemaLeaves(footer);
  const vectorLeaves = leafFor(leaves, shape.vectorColumn);
  if (vectorLeaves.length !== 1 || vectorLeaves[0].maxRep !== 1) throw new NativeUnsupported(`column ${shape.vectorColumn} is not a plain list of numbers`);
  const vleaf = vectorLeaves[0];
  if (vleaf.physical !== Physical.Float && vleaf.physical !== Physical.Double) throw new NativeUnsupported(`column ${shape.vectorColumn} holds neither FLOAT nor DOUBLE`);
  const idLeaf = shape.idColumn ? scalarLeaf(leaves, shape.idColumn) : null;
  if (idLeaf && ((idLeaf.physical !== Physical.Int64 && idLeaf.physical !== Physical.Int32) || !integerSigned(idLeaf))) {
    throw new NativeUnsupported(`id column ${shape.idColumn} is not a signed INT32 or INT64`);
  }
  const metaLeaves = shape.metadata.map(({ name, kind }) => {
    const leaf = scalarLeaf(leaves, name);
    if (!metadataFits(leaf, kind)) throw new NativeUnsupported(`metadata column ${name} (${kind}) has a physical type or annotation the native reader does not read`);
    return leaf;
  });

  // Every chunk's read in flight at once; then each decoded, the vectors first.
  const chunks = await Promise.all([vleaf, ...(idLeaf ? [idLeaf] : []), ...metaLeaves].map((l) => readChunk(file, footer, group, l, limitBytes)));
  const vectors = vectorsOf(decodeChunk(chunks[0]), vleaf, rows, dim, firstRow);
  let ids: Float64Array;
  if (idLeaf) ids = idsOf(decodeChunk(chunks[1]), idLeaf.path[0], rows, firstRow);
  else ids = rowOffsetIds(rows, firstRow);
  const first = idLeaf ? 2 : 1;
  const metadata: MetadataColumn[] = [];
  for (let i = 0; i < metaLeaves.length; i++) {
    const { name, kind } = shape.metadata[i];
    metadata.push(metadataOf(decodeChunk(chunks[first + i]), metaLeaves[i], name, kind, rows));
  }
  return { rows, ids, vectors, metadata };
}

function metadataFits(leaf: Leaf, kind: MetadataKind): boolean {
  const c = leaf.convertedType;
  switch (kind) {
    case 'string':
      return leaf.physical === Physical.ByteArray;
    case 'bool':
      return leaf.physical === Physical.Boolean;
    case 'bigint':
      return leaf.physical === Physical.Int64 && (c === undefined || c === 14 || c === 18);
    case 'number':
      if (leaf.physical === Physical.Float || leaf.physical === Physical.Double) return leaf.logicalType === undefined;
      return leaf.physical === Physical.Int32 && (c === undefined || (c >= 11 && c <= 17 && c !== 14));
  }
}

/** Vectors that are the decoder's own buffer: external memory, which Node does not transfer. */
const decoderOwned = new WeakSet<Float32Array>();

/** A group's vectors in memory a worker can transfer: the decoder's own buffer copied, others as they are. */
export function transferableVectors(vectors: Float32Array): Float32Array {
  return decoderOwned.has(vectors) ? vectors.slice() : vectors;
}

/**
 * The vector column: every row exactly `dim` values, none null, all finite (float64 narrowed to
 * float32 first, as group.ts does). The common case, every level entry a value and every row
 * starting every `dim` entries, is checked in one pass; the slow path names the first bad row.
 */
function vectorsOf(chunk: NativeParquetChunk, leaf: Leaf, rows: number, dim: number, firstRow: number): Float32Array {
  if (rows === 0 && chunk.levels === 0) return new Float32Array(0);
  // The decoder's summaries: every row `dim` level entries, each a value.
  const regular = chunk.count === chunk.levels && chunk.records === rows && chunk.recordLength === dim;
  if (!regular) throw firstBadRow(chunk, leaf, rows, dim, firstRow);
  const values = chunk.values as Float32Array | Float64Array;
  // Float32 values are the decoder's own buffer, kept as they are: no copy.
  if (values instanceof Float32Array && chunk.firstNonFinite < 0) {
    decoderOwned.add(values);
    return values;
  }
  const out = values instanceof Float32Array ? values : new Float32Array(values);
  for (let i = values instanceof Float32Array ? chunk.firstNonFinite : 0; i < out.length; i++) {
    const f = out[i];
    // A float64 beyond float32's range became Infinity above and is refused with the rest.
    if (f - f !== 0) {
      const r = Math.floor(i / dim);
      throw nonFinite(firstRow + r, values[i], i - r * dim);
    }
  }
  return out;
}

function firstBadRow(chunk: NativeParquetChunk, leaf: Leaf, rows: number, dim: number, firstRow: number): Error {
  const rep = chunk.repLevels!;
  const def = chunk.defLevels;
  const listAt = leaf.repetition.indexOf(2);
  // Below this definition level the vector itself is null (only when its field is optional).
  const vectorDefined = leaf.repetition[0] === 1 ? leaf.defAt[0] : 0;
  let row = -1;
  let length = 0;
  const finish = (): Error | null =>
    row >= 0 && length !== dim ? new ShapeError('dimension_mismatch', `row ${firstRow + row} has ${length} values; the dataset dimension is ${dim}`) : null;
  for (let i = 0; i < chunk.levels; i++) {
    if (rep[i] === 0) {
      const e = finish();
      if (e) return e;
      row++;
      length = 0;
    }
    const d = def ? def[i] : leaf.maxDef;
    if (d === leaf.maxDef) length++;
    else if (d < vectorDefined) return new ShapeError('null_vector', `row ${firstRow + row} has no vector`);
    else if (d >= leaf.defAt[listAt]) return new ShapeError('non_finite_value', `a vector near row ${firstRow + row} holds a null component`);
    // else an empty list: its length stays 0
  }
  const e = finish();
  if (e) return e;
  if (row + 1 !== rows) return new Error(`the vector column holds ${row + 1} rows; the row group declares ${rows}`);
  return new Error('the vector column\'s levels are inconsistent');
}

/** Level entry r's value index, or -1 where the row is null (flat columns: max level 0 or 1). */
function spread(chunk: NativeParquetChunk, rows: number, name: string): Int32Array | null {
  if (chunk.levels !== rows) throw new Error(`column ${name} holds ${chunk.levels} values; the row group declares ${rows} rows`);
  if (chunk.count === rows) return null;
  const def = chunk.defLevels!;
  const at = new Int32Array(rows);
  for (let r = 0, v = 0; r < rows; r++) at[r] = def[r] === 1 ? v++ : -1;
  return at;
}

function idsOf(chunk: NativeParquetChunk, name: string, rows: number, firstRow: number): Float64Array {
  const at = spread(chunk, rows, name);
  if (at) {
    const r = at.indexOf(-1);
    throw new ShapeError('invalid_id', `row ${firstRow + r} has no id`);
  }
  const out = new Float64Array(rows);
  const values = chunk.values as BigInt64Array | Int32Array;
  if (values instanceof Int32Array) {
    out.set(values);
    return out;
  }
  for (let r = 0; r < rows; r++) out[r] = safeId(values[r], firstRow + r);
  return out;
}

function metadataOf(chunk: NativeParquetChunk, leaf: Leaf, name: string, kind: MetadataKind, rows: number): MetadataColumn {
  const at = spread(chunk, rows, name);
  const col: MetadataColumn = { name, kind };
  if (at) {
    col.valid = new Uint8Array(rows);
    for (let r = 0; r < rows; r++) col.valid[r] = at[r] >= 0 ? 1 : 0;
  }
  const index = (r: number) => (at ? at[r] : r);
  if (kind === 'string') {
    const bytes = chunk.values as Uint8Array;
    const offsets = chunk.offsets!;
    const decoder = new TextDecoder();
    col.strings = new Array(rows);
    for (let r = 0; r < rows; r++) {
      const v = index(r);
      col.strings[r] = v < 0 ? null : decoder.decode(bytes.subarray(offsets[v], offsets[v + 1]));
    }
    return col;
  }
  col.numbers = new Float64Array(rows);
  const values = chunk.values;
  const unsigned = !integerSigned(leaf);
  for (let r = 0; r < rows; r++) {
    const v = index(r);
    if (v < 0) continue;
    const x = values[v];
    if (typeof x === 'bigint') col.numbers[r] = Number(unsigned ? BigInt.asUintN(64, x) : x);
    else col.numbers[r] = unsigned ? x >>> 0 : x;
  }
  return col;
}

/**
 * For the Parquet worker: the group decoded natively, or why not (then parquet-wasm reads it).
 * ShapeError (a bad row: the file's problem whichever decoder reads it) is thrown as groupData
 * throws it; every other refusal, NativeUnsupported or data this reader takes for corrupt, falls
 * back, so parquet-wasm has the last word on what a file holds.
 */
export async function readGroupNativeOrWhyNot(
  file: RandomAccess, footer: Footer, shape: FileShape, dim: number, group: number, firstRow: number,
  limitBytes = DEFAULT_CHUNK_LIMIT_BYTES,
): Promise<{ group: GroupData } | { fallback: string }> {
  try {
    return { group: await readGroupNative(file, footer, shape, dim, group, firstRow, limitBytes) };
  } catch (e) {
    if (e instanceof ShapeError) throw e;
    return { fallback: e instanceof Error ? e.message : String(e) };
  }
}
