/**
 * A dataset: partitions of native segments over one LMDB source of truth. This class is the
 * embedded API; the work lives in the section files beside it (writes, partitions, compaction,
 * search, hybrid, settings) over the state they share (core.ts).
 */
import type { FusedHit } from '../fusion.js';
import type { DatasetManifest, LmdbStore } from '../lmdb-store.js';
import type {
  AdvancedFilter,
  BatchSearchOptions,
  DatasetStats,
  Hit,
  Metadata,
  PromotionPolicy,
  Receipt,
  Scalar,
  SearchOptions,
  SlaConfig,
  ShardRunner,
  SlaStatus,
} from '../types.js';
import type { ColumnType, IndexType, Metric } from '../vocabulary.js';
import { compact, foldTails } from './compaction.js';
import { DatasetCore } from './core.js';
import { hybridSearch, keywordSearch, scoreIds } from './hybrid.js';
import { closePartitions, destroyPartitions, loadPartitions, promoteLocked, startAgeTimer, startGrowing } from './partitions.js';
import { admits, columnValues, matching, type Matching } from './scan.js';
import * as search from './search.js';
import * as settings from './settings.js';
import { tuningInEffect, type TuningInEffect } from './tuning.js';
import { deleteIds, upsert, type UpsertOptions } from './writes.js';
import { beginBulkLoad, type BulkLoad } from './bulk-load.js';

export class Dataset {
  private readonly core: DatasetCore;

  private constructor(storage: LmdbStore, manifest: DatasetManifest) {
    this.core = new DatasetCore(storage, manifest);
  }

  /** A new dataset whose manifest is already in the catalog. */
  static async create(storage: LmdbStore, manifest: DatasetManifest): Promise<Dataset> {
    const ds = new Dataset(storage, manifest);
    await startGrowing(ds.core);
    startAgeTimer(ds.core);
    return ds;
  }

  /** Reopens a dataset: snapshots are loaded (rebuilt from LMDB when missing or corrupt). */
  static async open(storage: LmdbStore, manifest: DatasetManifest): Promise<Dataset> {
    const ds = new Dataset(storage, manifest);
    await loadPartitions(ds.core);
    startAgeTimer(ds.core);
    return ds;
  }

  get name(): string {
    return this.core.name;
  }
  get dim(): number {
    return this.core.dim;
  }
  get metric(): Metric {
    return this.core.manifest.metric;
  }
  /** The dataset's manifest as stored in the engine catalog (read only). */
  get manifest(): Readonly<DatasetManifest> {
    return this.core.manifest;
  }
  /** How many snapshots were rebuilt from LMDB when this dataset was opened. */
  get rebuiltSnapshots(): number {
    return this.core.rebuiltSnapshots;
  }
  /** Rows not served because their snapshot held them past a delete. */
  get repairedRows(): number {
    return this.core.repairedRows;
  }

  // ---------------------------------------------------------------- writes

  /**
   * Inserts or replaces vectors; resolves once they are durable and searchable. `bulk`: a bulk
   * load's large batch, committed in fewer, larger transactions.
   */
  upsert(ids: number[] | Float64Array, vectors: Float32Array, metadata?: (Metadata | undefined | null)[], options?: UpsertOptions): Promise<{ upserted: number }> {
    return upsert(this.core, ids, vectors, metadata, options);
  }

  /** Deletes vectors by id; resolves with how many existed. */
  delete(ids: number[]): Promise<number> {
    return deleteIds(this.core, ids);
  }

  /**
   * Every upserted vector is indexed and durable when this resolves, and (for index types with
   * lists, and flat) the partitions sealed beside the largest are folded into it.
   */
  async flush(): Promise<void> {
    this.core.checkOpen();
    await this.core.exclusive(() => promoteLocked(this.core));
    await this.core.settle();
    await foldTails(this.core);
  }

  /**
   * Defers this dataset's index builds until the returned function is called: a bulk load seals
   * a partition every few seconds, and its builds would take the CPU the load needs; they run
   * after it, one at a time. Builds already started finish; searches answer meanwhile (exact
   * over partitions not built yet); close() lifts every hold.
   */
  holdBuilds(): () => void {
    return this.core.holdBuilds();
  }

  /**
   * A bulk load begins: builds are held as with holdBuilds, and a sable dataset gathers the
   * partitions the load freezes into one, built when the load ends (see bulk-load.ts).
   */
  beginBulkLoad(): BulkLoad {
    return beginBulkLoad(this.core);
  }

  /**
   * Merges sealed partitions that are small or carry tombstones into one, rebuilt without the
   * deleted rows. Searches and writes go on meanwhile. Resolves with the partitions merged.
   */
  compact(): Promise<{ merged: number }> {
    return compact(this.core);
  }

  // ---------------------------------------------------------------- search

  /** The nearest rows to `query`; on this thread, or on `runner`'s threads (a ShardPool). */
  async search(query: Float32Array, opts: SearchOptions = {}, runner?: ShardRunner): Promise<Hit[]> {
    return (await search.execute(this.core, query, opts, runner)).hits;
  }

  /** As search, with the receipt of what the engine did. */
  searchDetailed(query: Float32Array, opts: SearchOptions = {}, runner?: ShardRunner): Promise<{ hits: Hit[]; receipt: Receipt }> {
    return search.execute(this.core, query, opts, runner);
  }

  /** One hits array per query (`queries` holds them back to back); `threads` threads answer. */
  searchBatch(queries: Float32Array, opts: BatchSearchOptions = {}): Promise<Hit[][]> {
    return search.searchBatch(this.core, queries, opts);
  }

  /** Scores of the ids' vectors against a query (NaN for ids without a live vector). */
  scoreIds(ids: Float64Array, query: Float32Array): Float32Array {
    return scoreIds(this.core, ids, query);
  }

  /** Keyword (BM25) search over the `text` metadata, with the same filters as vector search. */
  keywordSearch(text: string, opts: SearchOptions = {}): Promise<{ id: number; score: number }[]> {
    return keywordSearch(this.core, text, opts);
  }

  /**
   * Dense plus keyword search fused on normalised scores; `alpha` 1 is pure vector, 0 pure
   * keyword. The dense part runs as search does (here, or on `runner`'s threads). With `pool`,
   * every candidate of the pool is answered, fused, not only the best topK: a caller fusing
   * several datasets' pools again (a cluster's shards) gets what one dataset would have fused.
   */
  hybridSearch(
    query: Float32Array | null,
    text: string,
    opts: SearchOptions & { alpha: number; pool?: boolean },
    runner?: ShardRunner,
  ): Promise<{ hits: (Hit & Omit<FusedHit, 'id' | 'score'>)[]; receipt: Receipt | null; keyword_candidates: number }> {
    return hybridSearch(this.core, query, text, opts, runner);
  }

  /** The ids of live rows the filters admit, at most `limit` of them. */
  matching(filters?: Record<string, Scalar>, advancedFilters?: AdvancedFilter[], limit = 100_000): Matching {
    return matching(this.core, filters, advancedFilters, limit);
  }

  /** Which of `ids` are live rows the filters admit (1) or not (0). */
  admits(ids: Float64Array, filters?: Record<string, Scalar>, advancedFilters?: AdvancedFilter[]): Uint8Array {
    return admits(this.core, ids, filters, advancedFilters);
  }

  /** The values of a string filter column, or null when it is not one or holds more than `limit`. */
  columnValues(field: string, limit = 1000): string[] | null {
    return columnValues(this.core, field, limit);
  }

  getVector(id: number): Float32Array | undefined {
    return search.getVector(this.core, id);
  }

  getMetadata(id: number): Metadata | undefined {
    return search.getMetadata(this.core, id);
  }

  // ---------------------------------------------------------------- settings and stats

  get promotionPolicy(): PromotionPolicy {
    return { ...this.core.manifest.promotion };
  }

  setPromotionPolicy(policy: Partial<PromotionPolicy>): Promise<PromotionPolicy> {
    return settings.setPromotionPolicy(this.core, policy);
  }

  /** Column types by metadata key: declared ones and those taken from the first value seen. */
  get columnTypes(): Record<string, ColumnType> {
    return { ...this.core.manifest.columns };
  }

  /**
   * Declares column types (a schema change): every partition's columns are rebuilt from the
   * stored metadata and swapped in at once, so searches see either the old or the new typing.
   */
  setColumnTypes(types: Record<string, ColumnType>): Promise<void> {
    return settings.setColumnTypes(this.core, types);
  }

  get sla(): SlaStatus {
    return this.core.tuner.status();
  }

  setSla(config: Partial<SlaConfig>): Promise<SlaStatus> {
    return settings.setSla(this.core, config);
  }

  /** Sets the index type of the dataset and rebuilds every sealed partition with it. */
  async setIndexType(indexType: IndexType, tuning?: DatasetManifest['tuning']): Promise<void> {
    await settings.setDefaults(this.core, { indexType, tuning });
    await this.rebuild();
  }

  /** Index type and tuning of partitions sealed from now on (existing ones keep theirs). */
  setDefaults(defaults: { indexType?: IndexType; tuning?: DatasetManifest['tuning'] }): Promise<void> {
    return settings.setDefaults(this.core, defaults);
  }

  /** Rebuilds the index of every sealed partition in the background; resolves when done. */
  rebuild(): Promise<void> {
    return settings.rebuild(this.core);
  }

  stats(): DatasetStats {
    return settings.stats(this.core);
  }

  /** nlist and the nprobe range in effect: the values set, else what the data gives. */
  tuning(): TuningInEffect {
    return tuningInEffect(this.core);
  }

  // ---------------------------------------------------------------- lifecycle

  /** Stops timers and waits for background work; the dataset is unusable afterwards. */
  close(): Promise<void> {
    return closePartitions(this.core);
  }

  /** Removes every vector, partition and snapshot of the dataset. */
  destroy(): Promise<void> {
    return destroyPartitions(this.core);
  }
}
