// The decode ceiling: reads a Parquet vectors file with one decoder alone, one row group at a
// time, down to the vector column's Float32Array, and prints one JSON line. Run in its own
// process by run.ts so its memory is its own.
//   node dist/bench/bulk/decode.js FILE [--decoder=wasm|hyparquet]
// wasm (the default): parquet-wasm, every column through Arrow IPC; files of 4 GiB and more go
// through one-row-group files (Node's openAsBlob reports their size modulo 2^32; see
// bulk/parquet/row-group-file.ts).
// hyparquet: the pure JavaScript reader (installed on demand into bench/.cache, see
// hyparquet-install.ts), every column decoded, the vector lists flattened into a Float32Array.
import * as arrow from 'apache-arrow';
import { ensureHyparquet, HYPARQUET_VERSION, importInstalled } from './hyparquet-install.js';
import { memoryOf } from './proc-memory.js';
import { wasmRowGroups } from './wasm-row-groups.js';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const decoder = process.argv.slice(2).find((a) => a.startsWith('--decoder='))?.slice('--decoder='.length) ?? 'wasm';
const path = positional[0];
if (!path || (decoder !== 'wasm' && decoder !== 'hyparquet')) {
  console.error('usage: node dist/bench/bulk/decode.js FILE [--decoder=wasm|hyparquet]');
  process.exit(2);
}
const VECTOR_COLUMN = 'embedding';

async function decodeWasm(): Promise<{ rows: number; checksum: number }> {
  let rows = 0;
  let checksum = 0;
  const take = (table: arrow.Table) => {
    for (const batch of table.batches) {
      checksum += (batch.getChild(VECTOR_COLUMN)!.data[0].children[0].values as Float32Array)[0];
      rows += batch.numRows;
    }
  };
  for await (const ipc of wasmRowGroups(path)) take(arrow.tableFromIPC(ipc));
  return { rows, checksum };
}

/** The part of hyparquet's API used here (it is not a dependency of the project, so no types). */
interface AsyncBuffer {
  byteLength: number;
  slice(start: number, end?: number): Promise<ArrayBuffer>;
}
interface Hyparquet {
  asyncBufferFromFile(path: string): Promise<AsyncBuffer>;
  parquetMetadataAsync(file: AsyncBuffer): Promise<{ row_groups: { num_rows: bigint }[] }>;
  parquetRead(o: {
    file: AsyncBuffer;
    metadata: unknown;
    rowStart: number;
    rowEnd: number;
    compressors: unknown;
    onChunk(c: { columnName: string; columnData: ArrayLike<unknown>; rowStart: number; rowEnd: number }): void;
  }): Promise<void>;
}

async function decodeHyparquet(hp: Hyparquet, compressors: unknown): Promise<{ rows: number; checksum: number }> {
  const file = await hp.asyncBufferFromFile(path);
  const metadata = await hp.parquetMetadataAsync(file);
  let rows = 0;
  let checksum = 0;
  let first = 0;
  for (const group of metadata.row_groups) {
    const n = Number(group.num_rows);
    let vectors: Float32Array | null = null;
    await hp.parquetRead({
      file,
      metadata,
      rowStart: first,
      rowEnd: first + n,
      compressors,
      onChunk: ({ columnName, columnData, rowStart, rowEnd }) => {
        if (columnName !== VECTOR_COLUMN) return;
        const lists = columnData as ArrayLike<ArrayLike<number>>;
        const dim = lists[0]?.length ?? 0;
        vectors ??= new Float32Array(n * dim);
        // Each row arrives as its own array of numbers: the flattening is part of the decode.
        for (let r = 0; r < rowEnd - rowStart; r++) vectors.set(lists[r], (rowStart - first + r) * dim);
      },
    });
    if (!vectors) throw new Error(`row group at row ${first} has no ${VECTOR_COLUMN} column`);
    checksum += (vectors as Float32Array)[0];
    rows += n;
    first += n;
  }
  return { rows, checksum };
}

// Loaded before the clock starts, as parquet-wasm is by its import.
let hyparquet: { hp: Hyparquet; compressors: unknown } | null = null;
if (decoder === 'hyparquet') {
  ensureHyparquet();
  hyparquet = { hp: await importInstalled<Hyparquet>('hyparquet'), compressors: (await importInstalled<{ compressors: unknown }>('hyparquet-compressors')).compressors };
}
const t0 = process.hrtime.bigint();
const { rows, checksum } = hyparquet ? await decodeHyparquet(hyparquet.hp, hyparquet.compressors) : await decodeWasm();
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const extra = decoder === 'wasm' ? {} : { decoder: `hyparquet ${HYPARQUET_VERSION}` };
console.log(JSON.stringify({ rows, seconds, checksum, peakRssBytes: memoryOf().peak, ...extra }));
