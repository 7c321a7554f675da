/**
 * A dataset's settings and state: the promotion policy, column types (schema changes), the SLA
 * the tuner works toward, index type and tuning, rebuilds, and stats. Every change is written to
 * the manifest in LMDB before it takes effect.
 */
import { invalid } from '../../errors/codes.js';
import { native } from '../native.js';
import { DEFAULT_SLA } from '../sla.js';
import type { DatasetManifest } from '../lmdb-store.js';
import type { DatasetStats, PromotionPolicy, SlaConfig, SlaStatus } from '../types.js';
import { checkColumnType, checkIndexType, type ColumnType, type IndexType } from '../vocabulary.js';
import type { DatasetCore } from './core.js';
import { sealThenCompact } from './compaction.js';
import { columnsFromStorage, promoteLocked, startAgeTimer } from './partitions.js';

export const DEFAULT_PROMOTION: PromotionPolicy = { max_buffer_vectors: 50_000, max_buffer_age_ms: 10_000 };

export async function setPromotionPolicy(core: DatasetCore, policy: Partial<PromotionPolicy>): Promise<PromotionPolicy> {
  const next = { ...core.manifest.promotion, ...policy };
  checkPromotion(next);
  await core.exclusive(async () => {
    core.manifest.promotion = next;
    await writeManifest(core);
    if (core.growing.rows >= next.max_buffer_vectors) await promoteLocked(core);
  });
  if (core.ageTimer) clearInterval(core.ageTimer);
  startAgeTimer(core);
  return { ...core.manifest.promotion };
}

/**
 * Declares column types (a schema change): every partition's columns are rebuilt from the
 * stored metadata and swapped in at once, so searches see either the old or the new typing.
 */
export async function setColumnTypes(core: DatasetCore, types: Record<string, ColumnType>): Promise<void> {
  core.checkOpen();
  for (const [name, type] of Object.entries(types)) checkColumnType(name, type);
  await core.exclusive(async () => {
    Object.assign(core.manifest.columns, types);
    const newCodes: [string, string, number][] = [];
    for (const p of core.allPartitions()) newCodes.push(...columnsFromStorage(core, p.handle));
    await core.storage.write(() => {
      core.storage.catalog.put(core.name, core.manifest);
      for (const [column, value, code] of newCodes) core.storage.dict.put([core.uid, column, value], code);
    });
  });
}

export async function setSla(core: DatasetCore, config: Partial<SlaConfig>): Promise<SlaStatus> {
  const next = { ...(core.manifest.sla ?? DEFAULT_SLA), ...config };
  checkSla(next);
  await core.exclusive(async () => {
    core.manifest.sla = next;
    await writeManifest(core);
  });
  core.tuner.reconfigure(next);
  return core.tuner.status();
}

/** Index type and tuning of partitions sealed from now on (existing ones keep theirs). */
export async function setDefaults(core: DatasetCore, defaults: { indexType?: IndexType; tuning?: DatasetManifest['tuning'] }): Promise<void> {
  if (defaults.indexType) checkIndexType(defaults.indexType);
  await core.exclusive(async () => {
    if (defaults.indexType) core.manifest.indexType = defaults.indexType;
    if (defaults.tuning) core.manifest.tuning = { ...core.manifest.tuning, ...defaults.tuning };
    await writeManifest(core);
  });
}

/** Rebuilds the index of every sealed partition in the background; resolves when done. */
export async function rebuild(core: DatasetCore): Promise<void> {
  core.checkOpen();
  // Reported as building from the call on, not from when earlier work lets it start.
  core.rebuildsWaiting++;
  let waiting = true;
  const stopWaiting = () => {
    if (waiting) core.rebuildsWaiting--;
    waiting = false;
  };
  try {
    await core.maintenanceTurn(async () => {
      await core.settle();
      for (const p of core.partitions.filter((p) => p.state === 'sealed')) {
        p.state = 'sealing';
        core.track(sealThenCompact(core, p));
      }
      stopWaiting();
      await core.settle();
    });
  } finally {
    stopWaiting();
  }
}

export function stats(core: DatasetCore): DatasetStats {
  let vectors = 0;
  let rows = 0;
  let memory = 0;
  let building = false;
  let progressSum = 0;
  let indexed = 0;
  for (const p of core.partitions) {
    const s = native.segmentStats(p.handle);
    vectors += s.live;
    rows += s.rows;
    memory += s.memoryBytes;
    if (p !== core.growing) {
      indexed++;
      if (p.state === 'sealed') progressSum += 100;
      else {
        // A partition sealing waits for its build, builds, then writes its snapshot.
        progressSum += p.built ? 100 : s.indexStatus === 'building' ? s.progress : 0;
        building = true;
      }
    }
  }
  // A compaction's target holds its copy of the rows until it replaces its sources.
  if (core.compaction) memory += native.segmentStats(core.compaction.target.handle).memoryBytes;
  const waiting = core.rebuildsWaiting > 0;
  return {
    name: core.name,
    dim: core.dim,
    metric: core.manifest.metric,
    vector_count: vectors,
    deleted_count: rows - vectors,
    index_type: core.manifest.indexType,
    index_status: building || (waiting && indexed > 0) ? 'building' : indexed === 0 ? 'empty' : 'ready',
    progress: indexed === 0 || waiting ? 0 : Math.round(progressSum / indexed),
    partitions: core.partitions.filter((p) => native.segmentStats(p.handle).rows > 0).length,
    growing_vectors: native.segmentStats(core.growing.handle).live,
    memory_bytes: memory,
    storage_bytes: vectors * core.dim * 4,
    built_at: core.builtAt,
  };
}

function writeManifest(core: DatasetCore): Promise<void> {
  return core.storage.write(() => void core.storage.catalog.put(core.name, core.manifest));
}

export function checkPromotion(p: PromotionPolicy): void {
  if (!Number.isInteger(p.max_buffer_vectors) || p.max_buffer_vectors < 1) throw invalid('max_buffer_vectors must be a positive integer');
  if (!Number.isInteger(p.max_buffer_age_ms) || p.max_buffer_age_ms < 1) throw invalid('max_buffer_age_ms must be a positive integer');
}

export function checkSla(s: SlaConfig): void {
  for (const [k, v] of Object.entries(s)) {
    if (!Number.isInteger(v) || v < 0) throw invalid(`${k} must be a non-negative integer`);
  }
  if (s.max_nprobe_fraction > 100) throw invalid('max_nprobe_fraction is a percentage of nlist (0-100)');
  if (s.min_beam_width > s.max_beam_width) throw invalid('min_beam_width exceeds max_beam_width');
}
