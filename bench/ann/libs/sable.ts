// sable through its embedded API (dist/engine/index.js), one in-memory dataset per run with a
// promotion policy large enough that every vector lands in one sealed, indexed partition.
// The four index types are four "libraries": sable (the default design), hnsw, ivf and flat.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LibName } from '../config.js';
import type { LoadedSet } from '../datasets.js';
import { bucketOf } from '../metrics.js';
import { paths, repoRoot } from '../paths.js';
import type { Adapter, ChildTask } from './types.js';

// The embedded API as the engine documents it (shared/spec/decisions.md, "The embedded engine",
// plus searchBatch threads, searchDetailed and stats). Kept local so the bench compiles while the
// engine is written and is loaded at run time from the compiled engine.
export type SableIndexType = 'sable' | 'hnsw' | 'ivf' | 'flat';

export interface SableHit {
  id: number;
  score: number;
  metadata?: unknown;
}

export interface SableAdvancedFilter {
  field: string;
  op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in';
  value: unknown;
}

export interface SableSearchOptions {
  topK: number;
  nprobe?: number;
  beamWidth?: number;
  threads?: 1 | 2;
  advancedFilters?: SableAdvancedFilter[];
}

export interface SableReceipt {
  strategy?: string;
  candidates_scored?: number;
  partitions_searched?: number;
  isa?: string;
  [key: string]: unknown;
}

export interface SableDataset {
  upsert(ids: number[], vectors: Float32Array, metadata?: object[]): Promise<unknown>;
  flush(): Promise<unknown>;
  search(query: Float32Array, opts: SableSearchOptions): Promise<SableHit[]>;
  searchBatch(queries: Float32Array, opts: SableSearchOptions): Promise<SableHit[][]>;
  searchDetailed(query: Float32Array, opts: SableSearchOptions): Promise<{ hits: SableHit[]; receipt: SableReceipt }>;
  stats(): { vector_count?: number; index_type?: string; index_status?: string; partitions?: number; memory_bytes?: number; [key: string]: unknown };
}

export interface SableEngine {
  readonly isa: string;
  createDataset(opts: {
    name: string;
    dim: number;
    metric: 'cosine' | 'l2' | 'ip';
    indexType: SableIndexType;
    tuning?: { nlist?: number; nprobe_min?: number; nprobe_max?: number; m?: number; ef_construction?: number };
    promotion?: { max_buffer_vectors: number; max_buffer_age_ms: number };
  }): Promise<SableDataset>;
  close(): Promise<void>;
}

export interface SableModule {
  Engine: { open(opts: { path?: string }): Promise<SableEngine> };
}

export async function loadSable(): Promise<SableModule> {
  if (!existsSync(paths.engineModule)) {
    throw new Error(`the engine is not built (${paths.engineModule} missing): run npm run build first, or --skip=sable`);
  }
  return (await import(pathToFileURL(paths.engineModule).href)) as SableModule;
}

const INDEX_TYPE: Partial<Record<LibName, SableIndexType>> = {
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
  const engine = await mod.Engine.open({});
  let ds: SableDataset | null = null;
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
          ? 'engine defaults'
          : 'exact';

  const opts = (value: number | null, threads: 1 | 2, threshold?: number): SableSearchOptions => {
    const o: SableSearchOptions = { topK: task.k, threads };
    if (knob && value !== null) o[knob] = value;
    if (threshold !== undefined) o.advancedFilters = [{ field: 'bucket', op: 'lt', value: threshold }];
    return o;
  };
  const toIds = (hits: SableHit[][]) => hits.map((h) => h.map((x) => x.id));

  return {
    version: (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version,
    buildLabel,
    buildThreads: 0,
    knob,
    notes: [],
    extraSettings: knob ? [{ label: 'default', value: null }] : [],
    isa: () => engine.isa,
    async build(d) {
      data = d;
      const dim = d.meta.dim;
      ds = await engine.createDataset({
        name: `${task.set}-${indexType}`,
        dim,
        metric: d.meta.metric,
        indexType,
        tuning,
        promotion: { max_buffer_vectors: 10_000_000, max_buffer_age_ms: 3_600_000 },
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
      if (st.index_type && st.index_type !== indexType) throw new Error(`dataset reports index_type ${st.index_type}, wanted ${indexType}`);
      if (st.vector_count !== undefined && st.vector_count !== d.n) throw new Error(`dataset holds ${st.vector_count} vectors, wanted ${d.n}`);
      if (st.partitions !== undefined && st.partitions !== 1) this.notes.push(`${st.partitions} partitions after flush`);
    },
    async selfSize() {
      const bytes = ds!.stats().memory_bytes;
      return { bytes: typeof bytes === 'number' ? bytes : null, kind: 'stats().memory_bytes' };
    },
    async search(value, threads) {
      return toIds(await ds!.searchBatch(data!.queries, opts(value, threads)));
    },
    async filteredSearch(value, threshold, threads) {
      return toIds(await ds!.searchBatch(data!.queries, opts(value, threads, threshold)));
    },
    async filteredStrategy(value, threshold) {
      const { receipt } = await ds!.searchDetailed(data!.queries.subarray(0, data!.meta.dim), opts(value, 1, threshold));
      return typeof receipt?.strategy === 'string' ? receipt.strategy : null;
    },
    async close() {
      await engine.close();
    },
  };
}
