// sable through its embedded API (dist/engine/index.js), one in-memory dataset per run with a
// promotion policy large enough that every vector lands in one sealed, indexed partition.
// The four index types are four "libraries": sable (the default design), hnsw, ivf and flat.
// A task with a loading pattern (bench:ann:matrix) instead loads as a user would, through the
// engine's default promotion policy, and measures the partitions that leaves.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LibName } from '../config.js';
import type { LoadedSet } from '../datasets.js';
import { bucketOf, isDeleted } from '../metrics.js';
import { paths, repoRoot } from '../paths.js';
import { deletedShare, type Adapter, type ChildTask, type LoadFigures, type LoadPattern } from './types.js';

// The embedded API (engine/index.ts). Types only: the module itself is loaded at run time from
// dist/engine/index.js, so the peers still run when the native core is not built.
import type { BatchSearchOptions, Dataset, Engine, Hit, IndexType } from '../../../engine/index.js';

/**
 * Rows per upsert, upserts in flight, and the rows a partition seals at: where a service fed at
 * that pace meets the default 10 s age promotion (500 rows/s in batches of 100, 100 rows/s one
 * by one), the promotion's size bound stands in for the age (null: the default policy), so the
 * partitions seal as they would and the engine folds them by its own rules. deletes-20 loads as
 * bulk, then deletes. A flush ends every load.
 */
const LOADS: Record<LoadPattern, { perUpsert: number; inFlight: number; sealEvery: number | null }> = {
  bulk: { perUpsert: Infinity, inFlight: 1, sealEvery: null },
  'batch-10000': { perUpsert: 10_000, inFlight: 1, sealEvery: null },
  'batch-100': { perUpsert: 100, inFlight: 256, sealEvery: 5_000 },
  single: { perUpsert: 1, inFlight: 256, sealEvery: 1_000 },
  'deletes-20': { perUpsert: Infinity, inFlight: 1, sealEvery: null },
};
const DELETES_PER_CALL = 1_000;

/** Loads the rows the pattern's way, then deletes its share; resolves with the rows deleted. */
async function loadRows(ds: Dataset, d: LoadedSet, pattern: LoadPattern): Promise<number> {
  const { perUpsert, inFlight } = LOADS[pattern];
  const dim = d.meta.dim;
  const upsert = (first: number, count: number) =>
    ds.upsert(Float64Array.from({ length: count }, (_, i) => first + i), d.base.subarray(first * dim, (first + count) * dim));
  for (let first = 0; first < d.n; ) {
    const end = Math.min(d.n, first + perUpsert * inFlight);
    const writes: Promise<unknown>[] = [];
    for (let at = first; at < end; at += perUpsert) writes.push(upsert(at, Math.min(perUpsert, end - at)));
    await Promise.all(writes);
    first = end;
  }
  await ds.flush();
  const share = deletedShare(pattern);
  if (share === 0) return 0;
  const doomed = Array.from({ length: d.n }, (_, id) => id).filter((id) => isDeleted(id, share));
  for (let i = 0; i < doomed.length; i += DELETES_PER_CALL) await ds.delete(doomed.slice(i, i + DELETES_PER_CALL));
  await ds.flush();
  return doomed.length;
}

const IDLE_MS = 1000;
/** Under 5% of a core over IDLE_MS: nothing is building. */
const IDLE_CPU_US = 50_000;
const SETTLE_LIMIT_MS = 15 * 60_000;

/**
 * Waits until nothing grows, builds or compacts; resolves with the seconds that took (the idle
 * window that proved it left out). A compaction under way does not show in stats() until it
 * swaps its partitions in, so the CPU the process burns is what gives it away.
 */
async function settle(ds: Dataset): Promise<number> {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const t0 = performance.now();
  for (;;) {
    const st = ds.stats();
    if (st.index_status === 'ready' && st.growing_vectors === 0) {
      const quietFrom = performance.now();
      const cpu0 = process.cpuUsage();
      await sleep(IDLE_MS);
      const cpu = process.cpuUsage(cpu0);
      const after = ds.stats();
      if (cpu.user + cpu.system < IDLE_CPU_US && after.partitions === st.partitions && after.memory_bytes === st.memory_bytes) {
        return (quietFrom - t0) / 1000;
      }
    } else {
      await sleep(100);
    }
    if (performance.now() - t0 > SETTLE_LIMIT_MS) throw new Error(`background work still running ${SETTLE_LIMIT_MS / 60_000} min after the load`);
  }
}

export type SableModule = typeof import('../../../engine/index.js');

export async function loadSable(): Promise<SableModule> {
  if (!existsSync(paths.engineModule)) {
    throw new Error(`the engine is not built (${paths.engineModule} missing): run npm run build first, or --skip=sable`);
  }
  return (await import(pathToFileURL(paths.engineModule).href)) as SableModule;
}

const INDEX_TYPE: Partial<Record<LibName, IndexType>> = {
  sable: 'sable',
  'sable-hnsw': 'hnsw',
  'sable-ivf': 'ivf',
  'sable-flat': 'flat',
};

/** The knob each index type sweeps. */
export function sableKnob(lib: LibName): 'nprobe' | 'beamWidth' | null {
  const t = INDEX_TYPE[lib];
  return t === 'hnsw' ? 'beamWidth' : t === 'flat' ? null : 'nprobe';
}

export async function createSable(task: ChildTask): Promise<Adapter> {
  const indexType = INDEX_TYPE[task.lib];
  if (!indexType) throw new Error(`not a sable library: ${task.lib}`);
  const mod = await loadSable();
  const engine: Engine = await mod.Engine.open({});
  let ds: Dataset | null = null;
  let data: LoadedSet | null = null;
  const knob = sableKnob(task.lib);
  const tuning =
    indexType === 'hnsw'
      ? { m: task.hnsw.m, ef_construction: task.hnsw.efConstruction }
      : indexType === 'ivf'
        ? { nlist: task.nlist }
        : {};
  const buildLabel =
    indexType === 'hnsw'
      ? `M=${task.hnsw.m} efC=${task.hnsw.efConstruction}`
      : indexType === 'ivf'
        ? `nlist=${task.nlist}`
        : indexType === 'sable'
          ? task.load
            ? `engine defaults, ${task.load}`
            : 'engine defaults'
          : 'exact';

  // Peers return ids only: ask for no metadata (it would be read per hit).
  const opts = (value: number | null, threads: 1 | 2, threshold?: number): BatchSearchOptions => {
    const o: BatchSearchOptions = { topK: task.k, threads, includeMetadata: false };
    if (knob && value !== null) o[knob] = value;
    if (threshold !== undefined) o.advancedFilters = [{ field: 'bucket', op: 'lt', value: threshold }];
    return o;
  };
  const toIds = (hits: Hit[][]) => hits.map((h) => h.map((x) => x.id));
  const notes: string[] = ['includeMetadata: false (ids only, like the peers)'];
  let loaded: LoadFigures | undefined;

  /** As bench:ann always loaded: metadata for the filtered cases, everything in one partition. */
  const loadInOnePartition = async (d: LoadedSet): Promise<void> => {
    const dim = d.meta.dim;
    ds = await engine.createDataset({
      name: `${task.set}-${indexType}`,
      dim,
      metric: d.meta.metric,
      indexType,
      tuning,
      promotion: { max_buffer_vectors: 10_000_000, max_buffer_age_ms: 3_600_000 },
      schema: [{ name: 'bucket', type: 'u32' }],
    });
    const chunk = 10_000;
    for (let first = 0; first < d.n; first += chunk) {
      const count = Math.min(chunk, d.n - first);
      const ids = Array.from({ length: count }, (_, i) => first + i);
      const metadata = ids.map((id) => ({ bucket: bucketOf(id) }));
      await ds.upsert(ids, d.base.subarray(first * dim, (first + count) * dim), metadata);
    }
    await ds.flush();
    const st = ds.stats();
    if (st.index_type !== indexType) throw new Error(`dataset reports index_type ${st.index_type}, wanted ${indexType}`);
    if (st.vector_count !== d.n) throw new Error(`dataset holds ${st.vector_count} vectors, wanted ${d.n}`);
    if (st.index_status !== 'ready') notes.push(`index_status ${st.index_status} after flush`);
    if (st.partitions !== 1) notes.push(`${st.partitions} partitions after flush`);
    if (st.growing_vectors > 0) notes.push(`${st.growing_vectors} vectors still in the growing partition`);
  };

  /** The pattern's way, with the engine's default promotion policy; ids and vectors only, like the peers. */
  const loadByPattern = async (d: LoadedSet, pattern: LoadPattern): Promise<void> => {
    const { sealEvery } = LOADS[pattern];
    const promotion = sealEvery === null ? undefined : { max_buffer_vectors: sealEvery, max_buffer_age_ms: 10_000 };
    ds = await engine.createDataset({ name: `${task.set}-${indexType}`, dim: d.meta.dim, metric: d.meta.metric, indexType, tuning, promotion });
    const t0 = performance.now();
    const deleted = await loadRows(ds, d, pattern);
    const loadSeconds = (performance.now() - t0) / 1000;
    const settleSeconds = await settle(ds);
    const st = ds.stats();
    if (st.vector_count !== d.n - deleted) throw new Error(`dataset holds ${st.vector_count} vectors, wanted ${d.n - deleted}`);
    loaded = { pattern, deleted, loadSeconds, settleSeconds, partitions: st.partitions };
  };

  return {
    version: (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version,
    buildLabel,
    buildThreads: 0,
    knob,
    notes,
    extraSettings: knob ? [{ label: 'default', value: null }] : [],
    isa: () => engine.isa,
    async build(d) {
      data = d;
      await (task.load ? loadByPattern(d, task.load) : loadInOnePartition(d));
    },
    loadFigures: () => loaded,
    async selfSize() {
      return { bytes: ds!.stats().memory_bytes, kind: 'stats().memory_bytes' };
    },
    async search(value, threads, limit = data!.nq) {
      return toIds(await ds!.searchBatch(data!.queries.subarray(0, limit * data!.meta.dim), opts(value, threads)));
    },
    async filteredSearch(value, threshold, threads, limit = data!.nq) {
      return toIds(await ds!.searchBatch(data!.queries.subarray(0, limit * data!.meta.dim), opts(value, threads, threshold)));
    },
    async filteredExactSearch(threshold, threads, limit = data!.nq) {
      return toIds(await ds!.searchBatch(data!.queries.subarray(0, limit * data!.meta.dim), { ...opts(null, threads, threshold), exact: true }));
    },
    async filteredStrategy(value, threshold) {
      const { receipt } = await ds!.searchDetailed(data!.queries.subarray(0, data!.meta.dim), opts(value, 1, threshold));
      const parts = receipt.partitions?.map((p) => p.strategy).filter((x, i, a) => a.indexOf(x) === i) ?? [];
      return parts.length > 0 ? parts.join('+') : receipt.strategy;
    },
    async close() {
      await engine.close();
    },
  };
}
