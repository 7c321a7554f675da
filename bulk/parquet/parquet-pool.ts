/**
 * Reads Parquet vector files on a worker thread (parquet-worker.ts), a row group per call. One
 * thread: a load job reads one file at a time and overlaps the next group's decoding with the
 * current group's upsert.
 *
 * Reads asked for together are posted to the thread at once (it runs them in order), not queued
 * in piscina: when the wasm decoder takes the thread down, piscina fails the tasks the thread
 * held, but with no minimum of threads it starts none for a queued task, which then waits
 * forever (piscina 5.1.3, `_onError` -> `_ensureMinimumWorkers`). A load reading two groups
 * ahead hung that way on the fuzz suite's rows-2^62 file.
 */
import { Piscina } from 'piscina';
import type { GroupData } from './group.js';
import type { ParquetResult, ParquetTask } from './parquet-worker.js';
import type { FileShape, LoadProblem } from './shape.js';

/** Tasks posted to the thread before it answers the first (a loader's reads ahead, a release). */
const TASKS_AT_ONCE = 4;

export class ParquetPool {
  private readonly pool = new Piscina<ParquetTask, ParquetResult>({
    filename: new URL('./parquet-worker.js', import.meta.url).href,
    minThreads: 0,
    maxThreads: 1,
    concurrentTasksPerWorker: TASKS_AT_ONCE,
    idleTimeout: 30_000,
  });

  async inspect(path: string, dim: number, idRequired: boolean): Promise<FileShape | LoadProblem> {
    const out = await this.pool.run({ op: 'inspect', path, dim, idRequired });
    return 'shape' in out ? out.shape : (out as { problem: LoadProblem }).problem;
  }

  async read(path: string, dim: number, shape: FileShape, group: number, firstRow: number): Promise<GroupData | LoadProblem> {
    let out: ParquetResult;
    try {
      out = await this.pool.run({ op: 'read', path, dim, shape, group, firstRow });
    } catch (e) {
      // A corrupt data page panics inside the wasm decoder, which takes its thread down with an
      // uncaught RuntimeError; piscina rejects the task and starts a fresh thread.
      if (e instanceof Error && (e.name === 'RuntimeError' || /unreachable/.test(e.message))) {
        return { type: 'corrupt_file', message: `row group ${group} cannot be decoded: the file's data is corrupt (${e.message})` };
      }
      throw e;
    }
    return 'group' in out ? out.group : (out as { problem: LoadProblem }).problem;
  }

  /** Lets the worker drop the file it holds open. */
  async release(path: string): Promise<void> {
    await this.pool.run({ op: 'close', path });
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
