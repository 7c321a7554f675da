/**
 * Runs on the Parquet pool's thread: opens a file lazily (only its footer is read) and decodes
 * one row group per call, so memory stays bounded by a row group whatever the file's size, and
 * decoding never holds the HTTP thread. The file stays open between calls for the same path.
 */
import { openAsBlob } from 'node:fs';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { groupData, type GroupData } from './group.js';
import { shapeOf, ShapeError, type FileShape, type LoadProblem } from './shape.js';

export type ParquetTask =
  | { op: 'inspect'; path: string; dim: number; idRequired: boolean }
  | { op: 'read'; path: string; dim: number; shape: FileShape; group: number; firstRow: number }
  | { op: 'close' };

export type ParquetResult = { shape: FileShape } | { group: GroupData } | { problem: LoadProblem } | { closed: true };

let open: { path: string; file: pq.ParquetFile } | null = null;

async function fileAt(path: string): Promise<pq.ParquetFile> {
  if (open?.path === path) return open.file;
  closeFile();
  const file = await pq.ParquetFile.fromFile(await openAsBlob(path));
  open = { path, file };
  return file;
}

function closeFile(): void {
  open?.file.free();
  open = null;
}

/** parquet-wasm's errors are strings or Errors with the Rust message; say what the file is not. */
function notParquet(e: unknown): LoadProblem {
  const text = e instanceof Error ? e.message : String(e);
  return { type: 'not_parquet', message: `the file cannot be read as Parquet: ${text}` };
}

export default async function run(task: ParquetTask): Promise<ParquetResult> {
  if (task.op === 'close') {
    closeFile();
    return { closed: true };
  }
  let file: pq.ParquetFile;
  try {
    file = await fileAt(task.path);
  } catch (e) {
    return { problem: notParquet(e) };
  }
  try {
    if (task.op === 'inspect') {
      const meta = file.metadata();
      const groups = meta.rowGroups().map((g) => {
        const n = g.numRows();
        g.free();
        return n;
      });
      meta.free();
      const schema = arrow.tableFromIPC(file.schema().intoIPCStream()).schema;
      const rows = groups.reduce((s, n) => s + n, 0);
      return { shape: shapeOf(schema, rows, groups, task.dim, task.idRequired) };
    }
    let table: arrow.Table;
    try {
      const columns = [task.shape.vectorColumn, ...(task.shape.idColumn ? [task.shape.idColumn] : []), ...task.shape.metadata.map((m) => m.name)];
      table = arrow.tableFromIPC((await file.read({ rowGroups: [task.group], columns, batchSize: 1 << 20 })).intoIPCStream());
    } catch (e) {
      return { problem: notParquet(e) };
    }
    // Structured clone copies the arrays (a few ms per 5,000 x 768 group); Piscina moves only
    // one transferable per result.
    return { group: groupData(table, task.shape, task.dim, task.firstRow) };
  } catch (e) {
    if (e instanceof ShapeError) return { problem: { type: e.type, message: e.message } };
    throw e;
  }
}
