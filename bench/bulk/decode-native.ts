// The native decode ceiling, beside decode.ts (parquet-wasm): reads a Parquet vectors file with
// the core's column-chunk reader (bulk/parquet/native-reader.ts), one row group at a time, down
// to the vectors' Float32Array (ids and metadata too), and prints one JSON line. Positioned
// reads, so files of any size.
import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { readGroupNative, schemaLeaves } from '../../bulk/parquet/native-reader.js';
import { fileAccess, readFooter, rowGroupRows } from '../../bulk/parquet/row-group-file.js';
import { VECTOR_COLUMNS, ID_COLUMNS, type FileShape, type MetadataKind } from '../../bulk/parquet/shape.js';
import type { ListValue, Struct } from '../../bulk/parquet/thrift-compact.js';
import { memoryOf } from './proc-memory.js';

const path = process.argv[2];
const t0 = process.hrtime.bigint();
const handle = await open(path, 'r');
const access = fileAccess(handle, statSync(path).size);
const footer = await readFooter(access);
// The shape without parquet-wasm: the top-level names, the vector column's list length read
// from the first group (the file generator writes fixed-size lists of one dimension).
const leaves = schemaLeaves(footer);
const names = [...new Set(leaves.map((l) => l.path[0]))];
const vectorColumn = VECTOR_COLUMNS.find((n) => names.includes(n));
if (!vectorColumn) throw new Error(`no vector column in ${names.join(', ')}`);
const idColumn = ID_COLUMNS.find((n) => names.includes(n)) ?? null;
const groups = footer.rowGroups.map(rowGroupRows);
// Every other top-level scalar column is metadata, decoded as the service would (decode.ts decodes every column too).
const KINDS: Record<number, MetadataKind> = { 0: 'bool', 1: 'number', 2: 'bigint', 4: 'number', 5: 'number', 6: 'string' };
const metadata = leaves
  .filter((l) => l.path.length === 1 && l.path[0] !== vectorColumn && l.path[0] !== idColumn && KINDS[l.physical])
  .map((l) => ({ name: l.path[0], kind: KINDS[l.physical] }));
const shape: FileShape = { rows: groups.reduce((s, n) => s + n, 0), rowGroups: groups, vectorColumn, fixedDim: null, idColumn, metadata };
// The dimension from the vector chunk's value count in the first group.
const firstVectors = (((footer.rowGroups[0].get(1)!.value as ListValue).items as Struct[])
  .map((c) => c.get(3)!.value as Struct)
  .find((m) => new TextDecoder().decode(((m.get(3)!.value as ListValue).items[0]) as Uint8Array) === vectorColumn))!;
const dim = Number(firstVectors.get(5)!.value) / groups[0];
let rows = 0;
let checksum = 0;
for (let g = 0; g < groups.length; g++) {
  const data = await readGroupNative(access, footer, shape, dim, g, rows);
  checksum += data.vectors[0];
  rows += data.rows;
}
await handle.close();
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ rows, seconds, checksum, peakRssBytes: memoryOf().peak }));
