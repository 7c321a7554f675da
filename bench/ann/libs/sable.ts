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

// The embedded API (engine/index.ts). Types only: the module itself is loaded at run time from
// dist/engine/index.js, so the peers still run when the native core is not built.
import type { BatchSearchOptions, Dataset, Engine, Hit, IndexType } from '../../../engine/index.js';

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
          ? 'engine defaults'
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
    },
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
