/**
 * Each row group of a Parquet file read by parquet-wasm, as Arrow IPC stream bytes, one at a
 * time (the decode ceiling's and the LanceDB peer's reader; each parses them with its own Arrow).
 * Files of 4 GiB and more go through one-row-group files: Node's openAsBlob reports their size
 * modulo 2^32 (see bulk/parquet/row-group-file.ts).
 */
import { openAsBlob, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import * as pq from 'parquet-wasm';
import { fileAccess, readFooter, rowGroupFile } from '../../bulk/parquet/row-group-file.js';

export async function* wasmRowGroups(path: string): AsyncGenerator<Uint8Array> {
  const size = statSync(path).size;
  if (size < 2 ** 32) {
    const file = await pq.ParquetFile.fromFile(await openAsBlob(path));
    const meta = file.metadata();
    const groups = meta.numRowGroups();
    meta.free();
    for (let g = 0; g < groups; g++) yield (await file.read({ rowGroups: [g], batchSize: 1 << 20 })).intoIPCStream();
    file.free();
    return;
  }
  const handle = await open(path, 'r');
  try {
    const access = fileAccess(handle, size);
    const footer = await readFooter(access);
    for (let g = 0; g < footer.rowGroups.length; g++) {
      const file = await pq.ParquetFile.fromFile(await rowGroupFile(access, footer, g));
      yield (await file.read({ rowGroups: [0], batchSize: 1 << 20 })).intoIPCStream();
      file.free();
    }
  } finally {
    await handle.close();
  }
}
