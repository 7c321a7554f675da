/**
 * Files of 4 GiB and more: Node 20's fs.openAsBlob reports their size modulo 2^32 (measured:
 * 349,186,338 for a 4,644,153,634-byte file) and parquet-wasm is 32-bit wasm, so neither may see
 * the whole file. The reader reads the footer itself (Thrift compact) with positioned reads, and
 * for each row group builds a small in-memory Parquet file, `PAR1` + that group's column chunks +
 * a footer holding only that group with its offsets moved, which parquet-wasm reads as usual.
 */
import type { FileHandle } from 'node:fs/promises';
import { T, Reader, Writer, type ListValue, type Struct } from './thrift-compact.js';

const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // PAR1

export interface Footer {
  meta: Struct;
  rowGroups: Struct[];
}

/** Positioned reads of a file (64-bit offsets). */
export interface RandomAccess {
  size: number;
  read(start: number, end: number): Promise<Uint8Array<ArrayBuffer>>;
}

/** Positioned reads of an open file. */
export function fileAccess(handle: FileHandle, size: number): RandomAccess {
  return {
    size,
    async read(start, end) {
      const out = new Uint8Array(end - start);
      for (let at = 0; at < out.length; ) {
        const { bytesRead } = await handle.read(out, at, out.length - at, start + at);
        if (bytesRead === 0) throw new Error('the file ended early');
        at += bytesRead;
      }
      return out;
    },
  };
}

/** The file's FileMetaData, read from its tail. */
export async function readFooter(file: RandomAccess): Promise<Footer> {
  if (file.size < 12) throw new Error('the file is too short to be Parquet');
  const tail = await file.read(file.size - 8, file.size);
  if (!tail.subarray(4).every((b, i) => b === MAGIC[i])) throw new Error('no Parquet magic at the end of the file');
  const length = new DataView(tail.buffer, tail.byteOffset).getUint32(0, true);
  if (length + 12 > file.size) throw new Error('the footer length runs past the start of the file');
  const bytes = await file.read(file.size - 8 - length, file.size - 8);
  const meta = new Reader(bytes).struct();
  const groups = meta.get(4)?.value as ListValue | undefined;
  return { meta, rowGroups: (groups?.items ?? []) as Struct[] };
}

export function rowGroupRows(g: Struct): number {
  return Number(g.get(3)?.value ?? 0n);
}

const i64 = (s: Struct, id: number): bigint | undefined => s.get(id)?.value as bigint | undefined;

/** Where a column chunk starts (its metadata `m`): its dictionary page when it has one before the data. */
export function chunkStart(m: Struct): bigint {
  const data = i64(m, 9)!;
  const dict = i64(m, 11);
  return dict !== undefined && dict > 0n && dict < data ? dict : data;
}

/** The bytes [start, end) of the file that a row group's column chunks occupy. */
function span(g: Struct): [bigint, bigint] {
  let start = -1n;
  let end = 0n;
  for (const c of (g.get(1)!.value as ListValue).items as Struct[]) {
    const m = c.get(3)?.value as Struct | undefined;
    if (!m) throw new Error('a column chunk has no metadata (external or encrypted chunks are not supported)');
    const first = chunkStart(m);
    const last = first + i64(m, 7)!;
    if (start < 0n || first < start) start = first;
    if (last > end) end = last;
  }
  return [start, end];
}

/** A Parquet file (in memory, as a Blob) holding only row group `index`. */
export async function rowGroupFile(file: RandomAccess, footer: Footer, index: number): Promise<Blob> {
  const group = footer.rowGroups[index];
  const [start, end] = span(group);
  const shift = start - BigInt(MAGIC.length);
  const moved: Struct = new Map(group);
  const columns = ((group.get(1)!.value as ListValue).items as Struct[]).map((c) => {
    const chunk: Struct = new Map(c);
    // The page indexes and bloom filters live outside the chunks: leave them out.
    for (const id of [4, 5, 6, 7]) chunk.delete(id);
    const off = i64(chunk, 2);
    if (off !== undefined && off > 0n) chunk.set(2, { type: T.I64, value: off - shift });
    const m: Struct = new Map(chunk.get(3)!.value as Struct);
    for (const id of [9, 10, 11]) {
      const v = i64(m, id);
      if (v !== undefined && v > 0n) m.set(id, { type: T.I64, value: v - shift });
    }
    m.delete(14);
    m.delete(15);
    chunk.set(3, { type: T.Struct, value: m });
    return chunk;
  });
  moved.set(1, { type: T.List, value: { kind: 'list', elem: T.Struct, set: false, items: columns } });
  const offset = i64(group, 5);
  if (offset !== undefined && offset > 0n) moved.set(5, { type: T.I64, value: offset - shift });
  const meta: Struct = new Map(footer.meta);
  meta.set(3, { type: T.I64, value: BigInt(rowGroupRows(group)) });
  meta.set(4, { type: T.List, value: { kind: 'list', elem: T.Struct, set: false, items: [moved] } });
  if (start < 0n || end > BigInt(file.size)) throw new Error(`row group ${index} lies outside the file`);
  return new Blob([MAGIC, await file.read(Number(start), Number(end)), ...footerBytes(meta)]);
}

/** A Parquet file with the footer's schema and no row groups (to read the schema). */
export function schemaFile(footer: Footer): Blob {
  const meta: Struct = new Map(footer.meta);
  meta.set(3, { type: T.I64, value: 0n });
  meta.set(4, { type: T.List, value: { kind: 'list', elem: T.Struct, set: false, items: [] } });
  return new Blob([MAGIC, ...footerBytes(meta)]);
}

/** The tail of a Parquet file: the encoded FileMetaData, its length, the magic. */
function footerBytes(meta: Struct): Uint8Array<ArrayBuffer>[] {
  const w = new Writer();
  w.struct(meta);
  const encoded = w.bytes();
  const length = new Uint8Array(4);
  new DataView(length.buffer).setUint32(0, encoded.length, true);
  return [encoded, length, MAGIC];
}
