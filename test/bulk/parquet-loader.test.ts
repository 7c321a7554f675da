// The Parquet loader keeps the Parquet pool's thread one row group ahead of the group being
// upserted (parquet-file-loader.ts): a real file decoded by the pool, and an upsert that takes
// its time as a durable commit does. Groups reach the dataset in file order, one at a time; a
// refused group fails the file with the dataset's reason, counting what earlier groups loaded;
// a group that takes the decoder's thread down fails the file, and reads asked for beside it
// are answered too, not left waiting (parquet-pool.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { ParquetLoader } from '../../dist/bulk/parquet-file-loader.js';
import { ParquetPool } from '../../dist/bulk/parquet/parquet-pool.js';
import { IdSet } from '../../dist/bulk/id-set.js';
import { FileError } from '../../dist/errors/job-errors.js';
import { hostileParquet } from '../support/fuzz/hostile-files.js';

const DIM = 16;
const GROUPS = 6;
const GROUP_ROWS = 100;
const dir = mkdtempSync(join(tmpdir(), 'sable-loader-'));

/** The real pool, noting which row groups the loader asked it for, in order. */
class NotingPool extends ParquetPool {
  asked: number[] = [];
  override read(...args: Parameters<ParquetPool['read']>) {
    this.asked.push(args[3]);
    return super.read(...args);
  }
}
const pool = new NotingPool();
afterAll(async () => {
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(): string {
  const rows = GROUPS * GROUP_ROWS;
  const path = join(dir, `v${rows}.parquet`);
  const vectors = Float32Array.from({ length: rows * DIM }, (_, i) => Math.cos(i));
  writeFileSync(path, parquetBytes([{ ids: BigInt64Array.from({ length: rows }, (_, r) => BigInt(r)), vectors, dim: DIM }], { rowGroupRows: GROUP_ROWS }));
  return path;
}

/** An upsert that commits after `ms`, refusing the group that starts at `refuse`. */
function slowDataset(ms: number, refuse = -1) {
  const seen = { firsts: [] as number[], askedAtUpsert: [] as number[], inFlight: 0, maxInFlight: 0 };
  const upsert = async (ids: Float64Array, vectors: Float32Array) => {
    expect(vectors.length).toBe(ids.length * DIM);
    seen.firsts.push(ids[0]!);
    seen.askedAtUpsert.push(pool.asked.length);
    seen.maxInFlight = Math.max(seen.maxInFlight, ++seen.inFlight);
    await new Promise((r) => setTimeout(r, ms));
    seen.inFlight--;
    if (ids[0] === refuse) throw Object.assign(new Error('dataset 7 was deleted'), { code: 'dataset_not_found' });
  };
  return { seen, upsert };
}

function request(path: string, upsert: (ids: Float64Array, vectors: Float32Array) => Promise<void>) {
  return { path, dim: DIM, validateOnly: false, idColumnRequired: false, seen: new IdSet(), upsert, shouldStop: () => false, onProgress: async () => {} };
}

describe('ParquetLoader', () => {
  it('has the next row group read while one is upserted, and upserts them in file order, one at a time', async () => {
    pool.asked = [];
    const { seen, upsert } = slowDataset(20);
    const out = await new ParquetLoader(pool).load(request(file(), upsert));
    expect(out).toEqual({ rows: GROUPS * GROUP_ROWS, inserted: GROUPS * GROUP_ROWS });
    expect(seen.firsts).toEqual(Array.from({ length: GROUPS }, (_, g) => g * GROUP_ROWS));
    expect(pool.asked).toEqual(Array.from({ length: GROUPS }, (_, g) => g));
    // When group g is upserted, groups up to g + 1 have been asked for.
    expect(seen.askedAtUpsert).toEqual(Array.from({ length: GROUPS }, (_, g) => Math.min(g + 2, GROUPS)));
    expect(seen.maxInFlight).toBe(1);
  });

  it('fails the file with the reason of a refused group, counting what earlier groups loaded', async () => {
    const { seen, upsert } = slowDataset(20, 2 * GROUP_ROWS);
    const error = await new ParquetLoader(pool).load(request(file(), upsert)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FileError);
    const e = error as FileError;
    expect(e.type).toBe('dataset_not_found');
    expect(seen.firsts).toEqual([0, 100, 200]);
    expect(e.inserted).toBe(2 * GROUP_ROWS);
    expect(e.message).toBe(`dataset 7 was deleted (${2 * GROUP_ROWS} vectors of earlier row groups were loaded)`);
  });

  it('fails a file whose group takes the decoder down, and loads the next file', async () => {
    const path = crashingFile();
    const { seen, upsert } = slowDataset(5);
    const error = await new ParquetLoader(pool).load(request(path, upsert)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FileError);
    expect((error as FileError).type, (error as FileError).message).toBe('corrupt_file');
    expect(seen.firsts).toEqual([]);
    const after = slowDataset(1);
    expect(await new ParquetLoader(pool).load(request(file(), after.upsert))).toEqual({ rows: GROUPS * GROUP_ROWS, inserted: GROUPS * GROUP_ROWS });
  }, 30_000);
});

describe('ParquetPool', () => {
  it('answers every read asked for beside one that takes the decoder down, then reads on', async () => {
    const path = crashingFile();
    const shape = await pool.inspect(path, DIM, false);
    expect(shape).toHaveProperty('rowGroups');
    const s = shape as Exclude<typeof shape, { message: string }>;
    // Three reads posted before the first is answered: the crash on group 0 answers all three.
    // Queued in piscina instead, the two behind it waited forever.
    const answers = await Promise.allSettled([0, 1, 0].map((g) => pool.read(path, DIM, s, g, 0)));
    expect(answers.map((a) => a.status === 'fulfilled' && 'type' in a.value && a.value.type)).toEqual(['corrupt_file', 'corrupt_file', 'corrupt_file']);
    await pool.release(path);
    const good = file();
    const goodShape = (await pool.inspect(good, DIM, false)) as typeof s;
    const group = await pool.read(good, DIM, goodShape, 1, GROUP_ROWS);
    expect(group).toMatchObject({ rows: GROUP_ROWS });
    await pool.release(good);
  }, 30_000);
});

/** Its first group's row count makes the wasm decoder panic, which ends the Parquet thread. */
function crashingFile(): string {
  const hostile = hostileParquet(DIM, 0, 1).find((f) => f.label === 'rows-2^62')!;
  const path = join(dir, hostile.name);
  writeFileSync(path, hostile.bytes);
  return path;
}
