// The decode ceiling: reads a Parquet vectors file with parquet-wasm alone, one row group at a
// time, down to the vector column's Float32Array, and prints one JSON line. Run in its own
// process by run.ts so its memory is its own. Files of 4 GiB and more go through one-row-group
// files (Node's openAsBlob reports their size modulo 2^32; see bulk/parquet/row-group-file.ts).
import { openAsBlob, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { fileAccess, readFooter, rowGroupFile } from '../../bulk/parquet/row-group-file.js';
import { memoryOf } from './proc-memory.js';

const path = process.argv[2];
const t0 = process.hrtime.bigint();
let rows = 0;
let checksum = 0;
const take = (table: arrow.Table) => {
  for (const batch of table.batches) {
    checksum += (batch.getChild('embedding')!.data[0].children[0].values as Float32Array)[0];
    rows += batch.numRows;
  }
};
const size = statSync(path).size;
if (size < 2 ** 32) {
  const file = await pq.ParquetFile.fromFile(await openAsBlob(path));
  const meta = file.metadata();
  const groups = meta.numRowGroups();
  meta.free();
  for (let g = 0; g < groups; g++) take(arrow.tableFromIPC((await file.read({ rowGroups: [g], batchSize: 1 << 20 })).intoIPCStream()));
  file.free();
} else {
  const handle = await open(path, 'r');
  const access = fileAccess(handle, size);
  const footer = await readFooter(access);
  for (let g = 0; g < footer.rowGroups.length; g++) {
    const file = await pq.ParquetFile.fromFile(await rowGroupFile(access, footer, g));
    take(arrow.tableFromIPC((await file.read({ rowGroups: [0], batchSize: 1 << 20 })).intoIPCStream()));
    file.free();
  }
  await handle.close();
}
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ rows, seconds, checksum, peakRssBytes: memoryOf().peak }));
