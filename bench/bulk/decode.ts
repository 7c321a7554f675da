// The decode ceiling: reads a Parquet vectors file with parquet-wasm alone, one row group at a
// time, down to the vector column's Float32Array, and prints one JSON line. Run in its own
// process by run.ts so its memory is its own.
import { openAsBlob } from 'node:fs';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { memoryOf } from './proc-memory.js';

const path = process.argv[2];
const t0 = process.hrtime.bigint();
const file = await pq.ParquetFile.fromFile(await openAsBlob(path));
const meta = file.metadata();
const groups = meta.numRowGroups();
meta.free();
let rows = 0;
let checksum = 0;
for (let g = 0; g < groups; g++) {
  const table = arrow.tableFromIPC((await file.read({ rowGroups: [g], batchSize: 1 << 20 })).intoIPCStream());
  for (const batch of table.batches) {
    const values = batch.getChild('embedding')!.data[0].children[0].values as Float32Array;
    checksum += values[0];
    rows += batch.numRows;
  }
}
file.free();
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ rows, seconds, checksum, peakRssBytes: memoryOf().peak }));
