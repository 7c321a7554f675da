/**
 * Runs on the Parquet pool's thread: reads a file's footer once and decodes one row group per
 * call (through a virtual one-group file, row-group-file.ts: files of any size), so memory stays
 * bounded by a row group whatever the file's size, and decoding never holds the HTTP thread.
 */
import { open as openFile, type FileHandle } from 'node:fs/promises';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { lowerThisThreadPriority } from '../../engine/index.js';
import { groupData, groupTransferables, type GroupData } from './group.js';
import { readGroupNativeOrWhyNot, transferableVectors } from './native-reader.js';
import { fileAccess, readFooter, rowGroupFile, rowGroupRows, schemaFile, type Footer, type RandomAccess } from './row-group-file.js';
import { shapeOf, ShapeError, type FileShape, type LoadProblem } from './shape.js';

// A bulk load's decoding is background work: searches take the CPU first.
lowerThisThreadPriority();

/** SABLE_PARQUET_DECODER=wasm reads every group with parquet-wasm (to compare, or to rule the core's reader out). */
const useNativeReader = process.env.SABLE_PARQUET_DECODER !== 'wasm';

export type ParquetTask =
  | { op: 'inspect'; path: string; dim: number; idRequired: boolean }
  | { op: 'read'; path: string; dim: number; shape: FileShape; group: number; firstRow: number }
  | { op: 'close'; path: string };

export type ParquetResult = { shape: FileShape } | { group: GroupData } | { problem: LoadProblem } | { closed: true };

interface OpenFile {
  handle: FileHandle;
  file: RandomAccess;
  footer: Footer;
}

/** Files held open between calls, by path: loads of two files may take turns on this thread. */
const openFiles = new Map<string, Promise<OpenFile>>();

async function closeFile(path: string): Promise<void> {
  const was = openFiles.get(path);
  openFiles.delete(path);
  await was?.then((f) => f.handle.close(), () => {});
}

function fileAt(path: string): Promise<OpenFile> {
  const held = openFiles.get(path);
  if (held) return held;
  const opening = openAndReadFooter(path);
  openFiles.set(path, opening);
  // A file that does not open is not held: the next call tries again and says why.
  opening.catch(() => openFiles.get(path) === opening && openFiles.delete(path));
  return opening;
}

async function openAndReadFooter(path: string): Promise<OpenFile> {
  const handle = await openFile(path, 'r');
  try {
    const file = fileAccess(handle, (await handle.stat()).size);
    return { handle, file, footer: await readFooter(file) };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/** parquet-wasm on a small virtual file (one row group, or the schema alone); freed after. */
async function withParquet<R>(blob: Blob, use: (f: pq.ParquetFile) => Promise<R>): Promise<R> {
  const f = await pq.ParquetFile.fromFile(blob);
  try {
    return await use(f);
  } finally {
    f.free();
  }
}

/** parquet-wasm's errors are strings or Errors with the Rust message; say what the file is not. */
function notParquet(e: unknown): LoadProblem {
  const text = e instanceof Error ? e.message : String(e);
  return { type: 'not_parquet', message: `the file cannot be read as Parquet: ${text}` };
}

/** The task before this one: the pool posts a load's reads ahead at once (parquet-pool.ts). */
let previous: Promise<unknown> = Promise.resolve();

/**
 * One task at a time, in the order posted: interleaved at their awaits, two groups' decodes
 * would each finish later, and the loader always waits for the first.
 */
export default function run(task: ParquetTask): Promise<ParquetResult> {
  const turn = previous.then(() => runTask(task));
  previous = turn.catch(() => {});
  return turn;
}

async function runTask(task: ParquetTask): Promise<ParquetResult> {
  if (task.op === 'close') {
    await closeFile(task.path);
    return { closed: true };
  }
  let file: RandomAccess;
  let footer: Footer;
  try {
    ({ file, footer } = await fileAt(task.path));
  } catch (e) {
    return { problem: notParquet(e) };
  }
  try {
    if (task.op === 'inspect') {
      let schema: arrow.Schema;
      try {
        schema = await withParquet(schemaFile(footer), async (f) => arrow.tableFromIPC(f.schema().intoIPCStream()).schema);
      } catch (e) {
        return { problem: notParquet(e) };
      }
      const groups = footer.rowGroups.map(rowGroupRows);
      const rows = groups.reduce((s, n) => s + n, 0);
      return { shape: shapeOf(schema, rows, groups, task.dim, task.idRequired) };
    }
    if (task.group < 0 || task.group >= footer.rowGroups.length) throw new Error(`row group ${task.group} is out of range`);
    // The core's reader first (about twice parquet-wasm's rate, bench/bulk/decode-native.ts);
    // what it does not read (codecs, encodings, types beyond a vectors file's, or data it takes
    // for corrupt) parquet-wasm reads, and has the last word on what the file holds.
    if (useNativeReader) {
      const native = await readGroupNativeOrWhyNot(file, footer, task.shape, task.dim, task.group, task.firstRow);
      // Float32 vectors are the decoder's own buffer, copied once here so the group moves.
      if ('group' in native) return moved({ ...native.group, vectors: transferableVectors(native.group.vectors) });
    }
    let table: arrow.Table;
    try {
      const columns = [task.shape.vectorColumn, ...(task.shape.idColumn ? [task.shape.idColumn] : []), ...task.shape.metadata.map((m) => m.name)];
      table = await withParquet(await rowGroupFile(file, footer, task.group), async (f) =>
        arrow.tableFromIPC((await f.read({ rowGroups: [0], columns, batchSize: 1 << 20 })).intoIPCStream()),
      );
    } catch (e) {
      return { problem: notParquet(e) };
    }
    return moved(groupData(table, task.shape, task.dim, task.firstRow));
  } catch (e) {
    if (e instanceof ShapeError) return { problem: { type: e.type, message: e.message } };
    throw e;
  }
}

/**
 * The group as a result whose buffers move to the loader's thread. Copied by the structured
 * clone instead, each 5,000 x 768 group was serialised here and copied again there: on a 1M x
 * 768 load, 2.5 s of the loader's thread went to the copies' page faults (perf, bench:bulk).
 */
function moved(group: GroupData): ParquetResult {
  return move({ [transferableSymbol]: groupTransferables(group), [valueSymbol]: { group } }) as unknown as ParquetResult;
}
