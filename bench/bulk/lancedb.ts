// The peer of bench:bulk: the same Parquet file(s) into LanceDB (@lancedb/lancedb 0.31.0, installed
// by bench/ann/env.ts into bench/.cache/lancedb with the Arrow 18.1 its peer range allows), in its
// own process so its VmHWM is its own. Reads each file with parquet-wasm a row group at a time
// (as decode.ts does), hands the row groups to LanceDB as Arrow tables (its Node API takes Arrow
// tables or rows, no Parquet reader of its own), builds an IVF_PQ cosine index on `embedding`
// and answers one query from it. Prints one JSON line; progress goes to stderr.
//   node dist/bench/bulk/lancedb.js --dir=DB --rows=N --query-row=0 [--add-rows=R] FILE...
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { LANCEDB_PREFIX, LANCEDB_VERSION } from '../ann/libs/lancedb.js';
import { Progress } from '../progress.js';
import { memoryOf } from './proc-memory.js';
import { wasmRowGroups } from './wasm-row-groups.js';

/** The part of Arrow 18 (LanceDB's copy, not the project's 21) and LanceDB's API used here. */
interface ArrowTable {
  numRows: number;
  batches: unknown[];
  getChild(name: string): { get(i: number): { toArray(): Float32Array } | null } | null;
}
interface Arrow18 {
  tableFromIPC(bytes: Uint8Array): ArrowTable;
  Table: new (batches: unknown[]) => ArrowTable;
}
interface Table {
  add(data: ArrowTable): Promise<unknown>;
  createIndex(column: string, o: { config: unknown }): Promise<void>;
  indexStats(name: string): Promise<{ numIndexedRows: number; numUnindexedRows: number; indexType: string; distanceType?: string } | undefined>;
  listIndices(): Promise<{ name: string }[]>;
  query(): { nearestTo(v: Float32Array): VectorQuery };
  close(): void;
}
interface VectorQuery {
  column(c: string): VectorQuery;
  distanceType(d: string): VectorQuery;
  limit(k: number): VectorQuery;
  select(c: string[]): VectorQuery;
  toArray(): Promise<{ id: bigint | number; _distance: number }[]>;
  explainPlan(verbose?: boolean): Promise<string>;
}
interface Lance {
  connect(uri: string): Promise<{ createTable(name: string, data: ArrowTable, o: { mode: string }): Promise<Table> }>;
  Index: { ivfPq(o: { numPartitions: number; numSubVectors: number; distanceType: string }): unknown };
}

const args: Record<string, string> = {};
const files: string[] = [];
for (const a of process.argv.slice(2)) {
  if (a.startsWith('--')) {
    const [k, ...v] = a.slice(2).split('=');
    args[k] = v.join('=');
  } else files.push(a);
}
if (!args.dir || !args.rows || files.length === 0) throw new Error('usage: lancedb.js --dir=DB --rows=N [--query-row=R] [--add-rows=R] FILE...');
const ROWS = Number(args.rows);
const QUERY_ROW = Number(args['query-row'] ?? 0);
// Rows per LanceDB write (each write is one fragment and one table version); 0: one per row group.
const ADD_ROWS = Number(args['add-rows'] ?? 0);

// Its scanner logs warnings on stderr; errors only.
process.env.LANCEDB_LOG ??= 'error';
process.env.RUST_LOG ??= 'error';
const need = createRequire(join(LANCEDB_PREFIX, 'package.json'));
const lancedb = need('@lancedb/lancedb') as Lance;
const arrow = need('apache-arrow') as Arrow18;

const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9;
const t0 = process.hrtime.bigint();
const db = await lancedb.connect(args.dir);
let table: Table | null = null;
let pending: unknown[] = [];
let pendingRows = 0;
let rows = 0;
let adds = 0;
let query: Float32Array | null = null;
let dim = 0;
const progress = new Progress('[bulk] lancedb writing', 'rows');
/** Writes the pending row groups: the first write creates the table. */
const flush = async (into: Table | null): Promise<Table | null> => {
  if (pendingRows === 0) return into;
  const chunk = new arrow.Table(pending);
  if (into) await into.add(chunk);
  else into = await db.createTable('vectors', chunk, { mode: 'create' });
  adds++;
  rows += pendingRows;
  pending = [];
  pendingRows = 0;
  progress.update(rows, ROWS, `RSS ${(memoryOf().rss / 2 ** 20).toFixed(0)} MB`);
  return into;
};
for (const path of files) {
  for await (const ipc of wasmRowGroups(path)) {
    const group = arrow.tableFromIPC(ipc);
    const at = QUERY_ROW - (rows + pendingRows);
    if (at >= 0 && at < group.numRows) {
      query = Float32Array.from(group.getChild('embedding')!.get(at)!.toArray());
      dim = query.length;
    }
    pending.push(...group.batches);
    pendingRows += group.numRows;
    if (pendingRows >= ADD_ROWS) table = await flush(table);
  }
}
table = await flush(table);
if (!table || !query) throw new Error(`read ${rows} rows: ${!table ? 'no rows' : `no row ${QUERY_ROW}`}`);
const writeSeconds = seconds(t0);

// LanceDB's own defaults, stated: sqrt(n) partitions, 16 dimensions per sub-vector (else 8).
const numPartitions = Math.max(1, Math.round(Math.sqrt(rows)));
const numSubVectors = dim % 16 === 0 ? dim / 16 : dim % 8 === 0 ? dim / 8 : 1;
const tIndex = process.hrtime.bigint();
const t = table;
await t.createIndex('embedding', { config: lancedb.Index.ivfPq({ numPartitions, numSubVectors, distanceType: 'cosine' }) });
const indexSeconds = seconds(tIndex);

const search = () => t.query().nearestTo(query!).column('embedding').distanceType('cosine').limit(10).select(['id']);
const tQuery = process.hrtime.bigint();
const hits = await search().toArray();
const querySeconds = seconds(tQuery);
const searchableSeconds = seconds(t0);
const peakRssBytes = memoryOf().peak;

// After the clock: what answered (the plan names the IVF index when it is used) and what is on disk.
const plan = await search().explainPlan(true);
const indexName = (await t.listIndices())[0]?.name;
const stats = indexName ? await t.indexStats(indexName) : undefined;
t.close();
console.log(
  JSON.stringify({
    version: LANCEDB_VERSION,
    rows,
    dim,
    adds,
    addRows: ADD_ROWS,
    writeSeconds,
    indexSeconds,
    querySeconds,
    searchableSeconds,
    peakRssBytes,
    diskBytes: Number(execFileSync('du', ['-sb', args.dir], { encoding: 'utf8' }).split('\t')[0]),
    numPartitions,
    numSubVectors,
    index: stats ?? null,
    usedIndex: /ANNSubIndex|ANNIvf/i.test(plan),
    plan: plan.trim(),
    top1: hits[0] ? { id: Number(hits[0].id), distance: hits[0]._distance } : null,
  }),
);
