/** Public types of the embedded API (README.md, "The embedded engine"). */
import type { NativeQueryOptions, NativeReceiptPartition, NativeResult } from './native.js';
import type { ColumnType, FilterOp, IndexType, Metric } from './vocabulary.js';

export type { ColumnType, FilterOp, IndexType, Metric } from './vocabulary.js';
export type Scalar = string | number | boolean | null;
export type Metadata = Record<string, Scalar>;

export interface Tuning {
  nlist?: number;
  nprobe_min?: number;
  nprobe_max?: number;
  m?: number;
  ef_construction?: number;
}

/** When the growing (exact-search) partition is sealed and indexed. */
export interface PromotionPolicy {
  max_buffer_vectors: number;
  max_buffer_age_ms: number;
}

export interface SlaConfig {
  target_p99_us: number;
  min_nprobe: number;
  /** Percent of nlist that nprobe may reach. */
  max_nprobe_fraction: number;
  min_beam_width: number;
  max_beam_width: number;
}

export interface SlaStatus extends SlaConfig {
  observed_p50_us: number | null;
  observed_p99_us: number | null;
  current_nprobe: number | null;
  current_beam_width: number | null;
}

export interface SchemaField {
  name: string;
  type: ColumnType;
}

export interface CreateDatasetOptions {
  name: string;
  dim: number;
  metric?: Metric;
  indexType?: IndexType;
  tuning?: Tuning;
  promotion?: Partial<PromotionPolicy>;
  sla?: Partial<SlaConfig>;
  /** Typed metadata columns; undeclared keys get a type from the first value seen. */
  schema?: SchemaField[];
}

export interface AdvancedFilter {
  field: string;
  op: FilterOp;
  value?: Scalar;
  values?: Scalar[];
}

/**
 * Runs searches off the calling thread (the service's ShardPool on piscina threads): a search
 * over more than `partitionsPerShard` segments is split into shards run in parallel here; a
 * single shard runs on the libuv pool, batched with the searches of its event-loop turn.
 */
export interface ShardRunner {
  /** Threads the runner has: a turn's batch of single-shard searches is split into as many tasks. */
  readonly threads: number;
  readonly partitionsPerShard: number;
  runShard(handles: number[], query: Float32Array, options: NativeQueryOptions): Promise<NativeResult>;
}

export interface SearchOptions {
  topK?: number;
  nprobe?: number;
  beamWidth?: number;
  rerankDepth?: number;
  /** Equality on metadata, both sides compared as strings. */
  filters?: Record<string, Scalar>;
  advancedFilters?: AdvancedFilter[];
  /** Attach each hit's metadata (default true). */
  includeMetadata?: boolean;
  /** Score every allowed vector exactly. */
  exact?: boolean;
}

export interface BatchSearchOptions extends SearchOptions {
  /** Threads answering the batch (default 1). */
  threads?: number;
}

export interface Hit {
  id: number;
  score: number;
  metadata?: Metadata;
}

/** What the engine did for a search. */
export interface Receipt {
  /** exact, index, widened, mixed (partitions differed) or none (nothing matched). */
  strategy: string;
  candidates_scored: number;
  partitions_searched: number;
  isa: string;
  partitions: NativeReceiptPartition[];
  /**
   * Expected recall@10 of this search: the partitions' calibrated estimates weighted by their
   * rows (null when a partition searched has none, such as an HNSW one).
   */
  estimated_recall: number | null;
  /** Wall time inside the engine, microseconds. */
  elapsed_us: number;
}

export interface DatasetStats {
  name: string;
  dim: number;
  metric: Metric;
  vector_count: number;
  deleted_count: number;
  index_type: IndexType;
  index_status: 'empty' | 'building' | 'ready';
  progress: number;
  partitions: number;
  growing_vectors: number;
  memory_bytes: number;
  storage_bytes: number;
  built_at: string | null;
}
