/**
 * Writes Parquet files of vectors with parquet-wasm + apache-arrow, a batch of rows at a time:
 * `ParquetVectorWriter` streams row groups to disk (a 3 GB file never sits in memory), so the
 * bulk benchmark and the tests build their files the way a user's pipeline would.
 */
import { openAsBlob } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';

export interface VectorBatch {
  /** null: no id column. */
  ids: BigInt64Array | null;
  /** rows x dim */
  vectors: Float32Array | Float64Array;
  dim: number;
  /** Extra scalar columns: typed arrays (numbers), string arrays or boolean arrays. */
  metadata?: Record<string, Float64Array | Int32Array | (string | null)[] | boolean[]>;
}

export interface WriterOptions {
  vectorColumn?: string;
  idColumn?: string;
  /** fixed: FixedSizeList<float>; list: List<float> (rows may then differ in length). */
  listKind?: 'fixed' | 'list';
  rowGroupRows?: number;
  /** Row lengths for listKind 'list' (default: every row `dim`). */
  rowLengths?: number[];
}

export function recordBatch(b: VectorBatch, o: WriterOptions = {}): arrow.RecordBatch {
  const rows = b.ids ? b.ids.length : o.rowLengths ? o.rowLengths.length : b.vectors.length / b.dim;
  const floatType = b.vectors instanceof Float64Array ? new arrow.Float64() : new arrow.Float32();
  const child = arrow.makeData({ type: floatType, length: b.vectors.length, nullCount: 0, data: b.vectors });
  let vectorType: arrow.DataType;
  let vectorData: arrow.Data;
  if ((o.listKind ?? 'fixed') === 'fixed') {
    vectorType = new arrow.FixedSizeList(b.dim, new arrow.Field('item', floatType, false));
    vectorData = arrow.makeData({ type: vectorType as arrow.FixedSizeList, length: rows, nullCount: 0, child });
  } else {
    vectorType = new arrow.List(new arrow.Field('item', floatType, false));
    const offsets = new Int32Array(rows + 1);
    for (let r = 0; r < rows; r++) offsets[r + 1] = offsets[r] + (o.rowLengths?.[r] ?? b.dim);
    vectorData = arrow.makeData({ type: vectorType as arrow.List, length: rows, nullCount: 0, valueOffsets: offsets, child });
  }
  const fields: arrow.Field[] = [];
  const children: arrow.Data[] = [];
  if (b.ids) {
    fields.push(new arrow.Field(o.idColumn ?? 'id', new arrow.Int64(), false));
    children.push(arrow.makeData({ type: new arrow.Int64(), length: rows, nullCount: 0, data: b.ids }));
  }
  fields.push(new arrow.Field(o.vectorColumn ?? 'embedding', vectorType, false));
  children.push(vectorData);
  for (const [name, values] of Object.entries(b.metadata ?? {})) {
    const v = values instanceof Float64Array ? arrow.makeVector(values) : values instanceof Int32Array ? arrow.makeVector(values) : typeof values[0] === 'boolean' ? arrow.vectorFromArray(values as boolean[], new arrow.Bool()) : arrow.vectorFromArray(values as (string | null)[], new arrow.Utf8());
    fields.push(new arrow.Field(name, v.type, true));
    children.push(v.data[0]);
  }
  const schema = new arrow.Schema(fields);
  return new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: rows, nullCount: 0, children }));
}

function properties(o: WriterOptions): pq.WriterProperties {
  return new pq.WriterPropertiesBuilder().setCompression(pq.Compression.SNAPPY).setMaxRowGroupSize(o.rowGroupRows ?? 5000).build();
}

/** A whole (small) file in one call. */
export function parquetBytes(batches: VectorBatch[], o: WriterOptions = {}): Uint8Array {
  const table = new arrow.Table(batches.map((b) => recordBatch(b, o)));
  return pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), properties(o));
}

/**
 * Streams batches from `next` (null when done) into a Parquet file, a row group at a time;
 * returns its size in bytes. The writer drops batches it does not like without a word, so the
 * file is written aside and renamed only when it holds every row sent.
 */
export async function writeParquetStream(path: string, next: () => VectorBatch | null, o: WriterOptions = {}): Promise<number> {
  let rowsSent = 0;
  const source = new ReadableStream({
    pull(controller) {
      const b = next();
      if (!b) return controller.close();
      const batch = recordBatch(b, o);
      rowsSent += batch.numRows;
      const wasm = pq.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table([batch]), 'stream'));
      for (const rb of wasm.recordBatches()) controller.enqueue(rb);
      wasm.free();
    },
  }, { highWaterMark: 0 });
  const out = await pq.transformParquetStream(source, properties(o));
  const partial = `${path}.part`;
  const fh = await open(partial, 'w');
  let bytes = 0;
  try {
    // A FileHandle sink: piping into Writable.toWeb(createWriteStream) kept every chunk in memory.
    await out.pipeTo(new WritableStream<Uint8Array>({ async write(chunk) { bytes += chunk.byteLength; await fh.write(chunk); } }));
  } finally {
    await fh.close();
  }
  const file = await pq.ParquetFile.fromFile(await openAsBlob(partial));
  const meta = file.metadata();
  const fileMeta = meta.fileMetadata();
  const rows = fileMeta.numRows();
  fileMeta.free();
  meta.free();
  file.free();
  if (rows !== rowsSent) throw new Error(`the Parquet writer kept ${rows} of the ${rowsSent} rows sent`);
  await rename(partial, path);
  return bytes;
}
