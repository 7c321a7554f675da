// LanceDB (@lancedb/lancedb 0.31.0 exactly: newer releases lack builds for other platforms and
// break `npm ci`), the embedded vector database a Node user would pick instead. It declares
// apache-arrow <= 18.1.0 as a peer while the project uses 21, so the bench installs it with
// Arrow 18.1.0 into bench/.cache/lancedb (env.ts: ensureLancedb), never into the project.
// Index: IVF-PQ by its guidance (about sqrt(n) partitions; 16 dimensions per sub-vector, else 8,
// else 4), a refine factor of 10 (10·k candidates re-scored on the full vectors), nprobes swept.
// Queries go as one batched query per pass (addQueryVector): one at a time through the binding
// it answered about 300 q/s on GloVe 100k here. It searches on its own thread pool, so its
// "1 thread" figures use every core; "2 threads" runs two half-batches at once.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { LoadedSet } from '../datasets.js';
import { paths } from '../paths.js';
import type { Adapter, ChildTask } from './types.js';

export const LANCEDB_VERSION = '0.31.0';
export const LANCEDB_PREFIX = join(paths.cache, 'lancedb');
const REFINE = 10;

/** The part of LanceDB's API the bench uses (it is not a dependency of the project, so no types). */
interface VectorQuery {
  distanceType(d: string): VectorQuery;
  nprobes(n: number): VectorQuery;
  refineFactor(r: number): VectorQuery;
  limit(k: number): VectorQuery;
  select(columns: string[]): VectorQuery;
  addQueryVector(v: number[]): VectorQuery;
  toArray(): Promise<unknown[]>;
}
interface Table {
  createIndex(column: string, o: { config: unknown }): Promise<void>;
  query(): { nearestTo(v: number[]): VectorQuery };
  close(): void;
}
interface Lance {
  connect(uri: string): Promise<{ createTable(name: string, rows: unknown[], o: { mode: string }): Promise<Table> }>;
  Index: { ivfPq(o: { numPartitions: number; numSubVectors: number; distanceType: string }): unknown };
}

export function createLancedb(task: ChildTask): Adapter {
  // Its scanner warns on every query that selects columns without `_distance`; errors only.
  process.env.LANCEDB_LOG ??= 'error';
  process.env.RUST_LOG ??= 'error';
  const lancedb = createRequire(join(LANCEDB_PREFIX, 'package.json'))('@lancedb/lancedb') as Lance;
  const dbDir = join(task.tmpDir, `lancedb-${task.set}-${task.n}-${process.pid}`);
  let data: LoadedSet | null = null;
  let table: Table | null = null;
  const distance = () => (data!.meta.metric === 'cosine' ? 'cosine' : 'l2');
  const vector = (q: number) => Array.from(data!.queries.subarray(q * data!.meta.dim, (q + 1) * data!.meta.dim));

  const batch = async (nprobes: number, from: number, to: number): Promise<ArrayLike<number>[]> => {
    let query = table!.query().nearestTo(vector(from)).distanceType(distance()).nprobes(nprobes).refineFactor(REFINE).limit(task.k).select(['id']);
    for (let q = from + 1; q < to; q++) query = query.addQueryVector(vector(q));
    const rows = (await query.toArray()) as { query_index?: number; id: number }[];
    const out: number[][] = Array.from({ length: to - from }, () => []);
    for (const r of rows) out[to - from === 1 ? 0 : r.query_index!]!.push(r.id);
    return out;
  };

  const notes = [`IVF-PQ, refine_factor ${REFINE}; queries batched (addQueryVector) and answered on LanceDB's own thread pool (its "1 thread" figures use every core)`];
  return {
    version: LANCEDB_VERSION,
    buildLabel: `IVF-PQ √n partitions, refine ${REFINE}`,
    buildThreads: 2,
    knob: 'nprobes',
    notes,
    async build(d) {
      data = d;
      const dim = d.meta.dim;
      const partitions = Math.max(1, Math.round(Math.sqrt(d.n)));
      const subVectors = dim % 16 === 0 ? dim / 16 : dim % 8 === 0 ? dim / 8 : dim % 4 === 0 ? dim / 4 : 1;
      notes.push(`IVF-PQ with ${partitions} partitions and ${subVectors} sub-vectors of ${dim / subVectors} dimensions`);
      const db = await lancedb.connect(dbDir);
      const rows = Array.from({ length: d.n }, (_, i) => ({ id: i, vector: Array.from(d.base.subarray(i * dim, (i + 1) * dim)) }));
      table = await db.createTable('vectors', rows, { mode: 'overwrite' });
      await table.createIndex('vector', { config: lancedb.Index.ivfPq({ numPartitions: partitions, numSubVectors: subVectors, distanceType: distance() }) });
    },
    async selfSize() {
      return { bytes: Number(execFileSync('du', ['-sb', dbDir], { encoding: 'utf8' }).split('\t')[0]), kind: 'dataset directory on disk' };
    },
    async search(value, threads, limit = data!.nq) {
      const nprobes = value ?? 20;
      if (threads === 1) return batch(nprobes, 0, limit);
      const half = Math.ceil(limit / 2);
      const [a, b] = await Promise.all([batch(nprobes, 0, half), batch(nprobes, half, limit)]);
      return [...a, ...b];
    },
    async close() {
      table?.close();
      if (!task.keepTmp) execFileSync('rm', ['-rf', dbDir]);
    },
  };
}
