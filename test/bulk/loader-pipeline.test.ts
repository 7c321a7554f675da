// The Parquet loader hands row group g to the dataset while g-1's upsert is still committing
// (parquet-file-loader.ts): a real file decoded by the Parquet pool's thread, and an upsert that
// takes its time as a durable commit does. Groups reach the dataset in file order, never more
// than two at once; a refused group fails the file with the dataset's reason, once the group
// after it has settled, and the error counts what was loaded.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { ParquetLoader } from '../../dist/bulk/parquet-file-loader.js';
import { ParquetPool } from '../../dist/bulk/parquet/parquet-pool.js';
import { IdSet } from '../../dist/bulk/id-set.js';
import { FileError } from '../../dist/errors/job-errors.js';

const DIM = 16;
const GROUPS = 6;
const GROUP_ROWS = 100;
const dir = mkdtempSync(join(tmpdir(), 'sable-loader-'));
const pool = new ParquetPool();
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
  const seen = { firsts: [] as number[], inFlight: 0, maxInFlight: 0, committed: 0 };
  const upsert = async (ids: Float64Array, vectors: Float32Array) => {
    expect(vectors.length).toBe(ids.length * DIM);
    seen.firsts.push(ids[0]!);
    seen.maxInFlight = Math.max(seen.maxInFlight, ++seen.inFlight);
    await new Promise((r) => setTimeout(r, ms));
    seen.inFlight--;
    if (ids[0] === refuse) throw Object.assign(new Error('dataset 7 was deleted'), { code: 'dataset_not_found' });
    seen.committed += ids.length;
  };
  return { seen, upsert };
}

function request(path: string, upsert: (ids: Float64Array, vectors: Float32Array) => Promise<void>) {
  return {
    path,
    dim: DIM,
    validateOnly: false,
    idColumnRequired: false,
    seen: new IdSet(),
    upsert,
    shouldStop: () => false,
    onProgress: async () => {},
  };
}

describe('ParquetLoader', () => {
  it('hands each row group over while the one before commits, in file order', async () => {
    const { seen, upsert } = slowDataset(30);
    const out = await new ParquetLoader(pool).load(request(file(), upsert));
    expect(out).toEqual({ rows: GROUPS * GROUP_ROWS, inserted: GROUPS * GROUP_ROWS });
    expect(seen.firsts).toEqual(Array.from({ length: GROUPS }, (_, g) => g * GROUP_ROWS));
    // Two at once: awaited one at a time (the old loader), this was 1.
    expect(seen.maxInFlight).toBe(2);
    expect(seen.committed).toBe(GROUPS * GROUP_ROWS);
  });

  it('fails the file with the reason of a refused group, counting what was loaded', async () => {
    const { seen, upsert } = slowDataset(30, 2 * GROUP_ROWS);
    const error = await new ParquetLoader(pool).load(request(file(), upsert)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FileError);
    const e = error as FileError;
    expect(e.type).toBe('dataset_not_found');
    // Groups 0 and 1, and group 3, handed over while group 2 committed; nothing after it.
    expect(seen.firsts).toEqual([0, 100, 200, 300]);
    expect(e.inserted).toBe(3 * GROUP_ROWS);
    expect(e.message).toBe(`dataset 7 was deleted (${3 * GROUP_ROWS} vectors of this file were loaded)`);
    expect(seen.inFlight).toBe(0);
  });
});
