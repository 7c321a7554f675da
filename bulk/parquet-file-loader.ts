/**
 * Loads one Parquet file of vectors into a dataset, a row group at a time: the Parquet pool's
 * thread decodes and checks group g+1 while group g is upserted, so memory stays near two row
 * groups whatever the file's size. Ids must be unique across the job's files.
 */
import type { Observations } from '../catalog/datasets/record.js';
import { addObservations } from '../catalog/datasets/schema.js';
import { isErrorCode } from '../errors/codes.js';
import { FileError } from '../errors/job-errors.js';
import type { Metadata } from '../engine/index.js';
import type { GroupData, MetadataColumn } from './parquet/group.js';
import type { ParquetPool } from './parquet/parquet-pool.js';
import type { LoadProblem } from './parquet/shape.js';
import { Interrupted } from '../jobs/runner.js';
import type { IdSet } from './id-set.js';

export interface LoadRequest {
  path: string;
  dim: number;
  validateOnly: boolean;
  /** Several files in the job: row offsets cannot stand in for ids. */
  idColumnRequired: boolean;
  seen: IdSet;
  /** `observed`: the metadata values by type, counted from the columns (schema inference). */
  upsert(ids: Float64Array, vectors: Float32Array, metadata: Metadata[] | undefined, observed: Observations): Promise<void>;
  /** The file's rows, once its footer is read (before its first batch). */
  expectRows?(rows: number): void;
  shouldStop(): boolean;
  onProgress(rowsDone: number, rowsTotal: number, inserted: number): Promise<void>;
}

export interface FileLoader {
  load(req: LoadRequest): Promise<{ rows: number; inserted: number }>;
}

/**
 * Row groups read ahead of the one being upserted. Two ahead loaded 1M x 768 in 24.2 s against
 * 29.5 one day, and in 32.9 and 27.0 s against 25.7 and 26.9 another (bench:bulk, alternating
 * runs): on 2 cores the Parquet thread decoding further ahead takes CPU from the service's
 * thread and LMDB's writer, and holds one group more.
 */
const READ_AHEAD = 1;

const isProblem = (x: object): x is LoadProblem => 'type' in x && 'message' in x;

export class ParquetLoader implements FileLoader {
  constructor(private readonly pool: ParquetPool) {}

  async load(req: LoadRequest): Promise<{ rows: number; inserted: number }> {
    let inserted = 0;
    // Reads under way, in file order: the Parquet thread always has the next group to decode.
    const reads: Promise<GroupData | LoadProblem>[] = [];
    // Ends the file: the reads already under way are let finish first, and a failure says how
    // much of the file earlier row groups loaded.
    const stop = async (error: Error): Promise<never> => {
      await Promise.allSettled(reads);
      if (error instanceof FileError && inserted > 0) {
        throw new FileError(error.type, `${error.message} (${inserted} vectors of earlier row groups were loaded)`, inserted);
      }
      throw error;
    };
    try {
      const shape = await this.pool.inspect(req.path, req.dim, req.idColumnRequired);
      if (isProblem(shape)) throw new FileError(shape.type, shape.message);
      req.expectRows?.(shape.rows);
      const starts: number[] = [];
      shape.rowGroups.reduce((first, rows) => (starts.push(first), first + rows), 0);
      const read = (g: number) => this.pool.read(req.path, req.dim, shape, g, starts[g]);
      for (let g = 0; g < Math.min(READ_AHEAD, shape.rowGroups.length); g++) reads.push(read(g));
      let rowsDone = 0;
      let observed: Observations = {};
      for (let g = 0; g < shape.rowGroups.length; g++) {
        const group = await reads.shift()!;
        if (g + READ_AHEAD < shape.rowGroups.length) reads.push(read(g + READ_AHEAD));
        if (isProblem(group)) await stop(new FileError(group.type, group.message));
        const data = group as GroupData;
        for (let r = 0; r < data.rows; r++) {
          if (!req.seen.add(data.ids[r])) await stop(new FileError('duplicate_id', `id ${data.ids[r]} (row ${starts[g] + r}) appears more than once in this job`));
        }
        if (!req.validateOnly) {
          // Schema inference sees the first group at once (its columns become filterable during
          // the load); later counts are added up and recorded with the file's last group.
          addObservations(observed, observationsOf(data));
          const record = g === 0 || g === shape.rowGroups.length - 1;
          try {
            await req.upsert(data.ids, data.vectors, metadataRows(data), record ? observed : {});
          } catch (e) {
            // The dataset refused the batch (deleted meanwhile, closed, out of space): the file
            // fails with that reason.
            const code = (e as { code?: unknown }).code;
            await stop(new FileError(isErrorCode(code) ? code : 'internal', (e as Error).message));
          }
          if (record) observed = {};
          inserted += data.rows;
        }
        rowsDone += data.rows;
        await req.onProgress(rowsDone, shape.rows, inserted);
        if (req.shouldStop()) await stop(new Interrupted());
      }
      return { rows: rowsDone, inserted };
    } finally {
      await this.pool.release(req.path).catch(() => {});
    }
  }
}

/** The engine takes metadata as one object per row; built here from the columns, per group. */
function metadataRows(group: GroupData): Metadata[] | undefined {
  if (group.metadata.length === 0) return undefined;
  const rows: Metadata[] = new Array(group.rows);
  for (let r = 0; r < group.rows; r++) {
    const m: Metadata = {};
    for (const c of group.metadata) if (!c.valid || c.valid[r]) m[c.name] = valueAt(c, r);
    rows[r] = m;
  }
  return rows;
}

/** Non-null values per column by JSON type, as schema inference counts them. */
function observationsOf(group: GroupData): Observations {
  const out: Observations = {};
  for (const c of group.metadata) {
    const o = (out[c.name] = { integer: 0, float: 0, string: 0, other: 0 });
    for (let r = 0; r < group.rows; r++) {
      if (c.valid && !c.valid[r]) continue;
      if (c.strings) o.string++;
      else if (c.kind === 'bool') o.other++;
      else if (Number.isInteger(c.numbers![r])) o.integer++;
      else o.float++;
    }
  }
  return out;
}

function valueAt(c: MetadataColumn, r: number): string | number | boolean {
  if (c.strings) return c.strings[r] as string;
  if (c.kind === 'bool') return c.numbers![r] === 1;
  return c.numbers![r];
}
