// LanceDB (@lancedb/lancedb 0.31.0 exactly: newer releases lack builds for other platforms and
// break `npm ci`), the embedded vector database a Node user would pick instead. It declares
// apache-arrow <= 18.1.0 as a peer while the project uses 21, so the bench installs it with
// Arrow 18.1.0 into bench/.cache/lancedb (env.ts: ensureLancedb), never into the project.
// Two indexes, one library name each, sharing the table, the batched queries and the clean-up:
// - `lancedb`: IVF-PQ by its guidance (about sqrt(n) partitions; 16 dimensions per sub-vector,
//   else 8, else 4), a refine factor of 10 (10·k candidates re-scored on the full vectors),
//   nprobes swept.
// - `lancedb-hnsw`: IVF-HNSW-SQ (IVF partitions, an HNSW graph over 8-bit scalar-quantised
//   vectors in each), ef swept. Parameters by LanceDB's guidance (see HNSW_SQ below).
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

/**
 * IVF-HNSW-SQ build settings, from LanceDB 0.31's own documentation of `HnswSqOptions` (the
 * package's dist/indices.d.ts, also lancedb.github.io/lancedb/js/interfaces/HnswSqOptions) and
 * its ANN index guide (lancedb/lancedb docs/src/ann_indexes.md, "How to choose m and
 * ef_construction for IVF_HNSW_* index"):
 * - numPartitions 1: "For HNSW, we recommend a small number of partitions. Setting this to 1
 *   works well for most tables"; more only lowers the peak memory of training very large tables.
 *   With one partition every query searches the one graph, so nprobes has nothing to select and
 *   `ef` is the only search knob.
 * - m 20 and efConstruction 300: the library's defaults; the guide puts m at 5–48 (higher for
 *   high-dimensional data or high recall) and efConstruction at 150–300 typically, at least 100,
 *   no benefit past 500, and never below the search-time ef: the ef sweep stops at 300.
 */
export const HNSW_SQ = { numPartitions: 1, m: 20, efConstruction: 300 } as const;

/** The part of LanceDB's API the bench uses (it is not a dependency of the project, so no types). */
interface VectorQuery {
  distanceType(d: string): VectorQuery;
  nprobes(n: number): VectorQuery;
  refineFactor(r: number): VectorQuery;
  ef(ef: number): VectorQuery;
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
  Index: {
    ivfPq(o: { numPartitions: number; numSubVectors: number; distanceType: string }): unknown;
    hnswSq(o: { numPartitions: number; m: number; efConstruction: number; distanceType: string }): unknown;
  };
}

/** What differs between the two LanceDB indexes: how each is built and what its knob sets. */
interface LanceIndex {
  knob: string;
  buildLabel: string;
  note: string;
  /** The index config for this set, and a note saying what it came to. */
  config(lancedb: Lance, d: LoadedSet, distanceType: string): { config: unknown; note: string };
  /** The query with the knob at `value` (null: the library's default). */
  tune(query: VectorQuery, value: number | null): VectorQuery;
}

const IVF_PQ: LanceIndex = {
  knob: 'nprobes',
  buildLabel: `IVF-PQ √n partitions, refine ${REFINE}`,
  note: `IVF-PQ, refine_factor ${REFINE}`,
  config(lancedb, d, distanceType) {
    const dim = d.meta.dim;
    const numPartitions = Math.max(1, Math.round(Math.sqrt(d.n)));
    const numSubVectors = dim % 16 === 0 ? dim / 16 : dim % 8 === 0 ? dim / 8 : dim % 4 === 0 ? dim / 4 : 1;
    return {
      config: lancedb.Index.ivfPq({ numPartitions, numSubVectors, distanceType }),
      note: `IVF-PQ with ${numPartitions} partitions and ${numSubVectors} sub-vectors of ${dim / numSubVectors} dimensions`,
    };
  },
  tune: (query, value) => query.nprobes(value ?? 20).refineFactor(REFINE),
};

const IVF_HNSW_SQ: LanceIndex = {
  knob: 'ef',
  buildLabel: `IVF-HNSW-SQ ${HNSW_SQ.numPartitions} partition, m=${HNSW_SQ.m} efC=${HNSW_SQ.efConstruction}`,
  note: `IVF-HNSW-SQ (8-bit scalar quantisation, no refine), ${HNSW_SQ.numPartitions} partition, m=${HNSW_SQ.m}, efConstruction=${HNSW_SQ.efConstruction} (LanceDB's guidance and defaults); ef swept up to efConstruction`,
  config: (lancedb, _d, distanceType) => ({ config: lancedb.Index.hnswSq({ ...HNSW_SQ, distanceType }), note: '' }),
  // Its default ef is 1.5·limit.
  tune: (query, value) => (value === null ? query : query.ef(value)),
};

export function createLancedb(task: ChildTask): Adapter {
  const index = task.lib === 'lancedb-hnsw' ? IVF_HNSW_SQ : IVF_PQ;
  // Its scanner warns on every query that selects columns without `_distance`; errors only.
  process.env.LANCEDB_LOG ??= 'error';
  process.env.RUST_LOG ??= 'error';
  const lancedb = createRequire(join(LANCEDB_PREFIX, 'package.json'))('@lancedb/lancedb') as Lance;
  const dbDir = join(task.tmpDir, `${task.lib}-${task.set}-${task.n}-${process.pid}`);
  let data: LoadedSet | null = null;
  let table: Table | null = null;
  const distance = () => (data!.meta.metric === 'cosine' ? 'cosine' : 'l2');
  const vector = (q: number) => Array.from(data!.queries.subarray(q * data!.meta.dim, (q + 1) * data!.meta.dim));

  const batch = async (value: number | null, from: number, to: number): Promise<ArrayLike<number>[]> => {
    let query = index.tune(table!.query().nearestTo(vector(from)).distanceType(distance()), value).limit(task.k).select(['id']);
    for (let q = from + 1; q < to; q++) query = query.addQueryVector(vector(q));
    const rows = (await query.toArray()) as { query_index?: number; id: number }[];
    const out: number[][] = Array.from({ length: to - from }, () => []);
    for (const r of rows) out[to - from === 1 ? 0 : r.query_index!]!.push(r.id);
    return out;
  };

  const notes = [`${index.note}; queries batched (addQueryVector) and answered on LanceDB's own thread pool (its "1 thread" figures use every core)`];
  return {
    version: LANCEDB_VERSION,
    buildLabel: index.buildLabel,
    buildThreads: 2,
    knob: index.knob,
    notes,
    async build(d) {
      data = d;
      const dim = d.meta.dim;
      const { config, note } = index.config(lancedb, d, distance());
      if (note) notes.push(note);
      const db = await lancedb.connect(dbDir);
      const rows = Array.from({ length: d.n }, (_, i) => ({ id: i, vector: Array.from(d.base.subarray(i * dim, (i + 1) * dim)) }));
      table = await db.createTable('vectors', rows, { mode: 'overwrite' });
      await table.createIndex('vector', { config });
    },
    async selfSize() {
      return { bytes: Number(execFileSync('du', ['-sb', dbDir], { encoding: 'utf8' }).split('\t')[0]), kind: 'dataset directory on disk' };
    },
    async search(value, threads, limit = data!.nq) {
      if (threads === 1) return batch(value, 0, limit);
      const half = Math.ceil(limit / 2);
      const [a, b] = await Promise.all([batch(value, 0, half), batch(value, half, limit)]);
      return [...a, ...b];
    },
    async close() {
      table?.close();
      if (!task.keepTmp) execFileSync('rm', ['-rf', dbDir]);
    },
  };
}
