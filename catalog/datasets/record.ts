/**
 * The API's dataset object as stored in the control store (the engine keeps its own manifest of
 * the dataset's vectors: engine/lmdb-store.ts, DatasetManifest).
 */
import type { ColumnType, IndexType, Metric, PromotionPolicy, SlaConfig } from '../../engine/index.js';

/** The contract's schema types: the engine's column types but booleans. */
export type SchemaType = Exclude<ColumnType, 'bool'>;

export interface SchemaEntry {
  name: string;
  type: SchemaType;
  source: 'user' | 'inferred';
  confidence?: number;
  samples?: number;
}

/** Per metadata key: how many values of each kind were seen (drives inferred promotions). */
export type Observations = Record<string, { integer: number; float: number; string: number; other: number }>;

/** The hybrid weight a new dataset stores (alpha * dense + (1 - alpha) * keyword): an even split until its owner tunes it. */
export const DEFAULT_HYBRID_ALPHA = 0.5;

export interface DatasetRecord {
  id: string;
  name: string;
  org_id: string;
  dim: number;
  metric: Metric;
  tuning: { nlist: number | null; nprobe_min: number | null; nprobe_max: number | null; m?: number | null; ef_construction?: number | null };
  embedding: { provider: string; model: string; secret_ref?: string };
  index_type: IndexType;
  hybrid: { enabled: boolean; alpha: number };
  metadata: Record<string, unknown>;
  schema: SchemaEntry[];
  schema_version: number;
  observations: Observations;
  /**
   * Cluster mode: the settings every replica of the dataset applies (embedded, the engine
   * dataset keeps them itself).
   */
  promotion?: Partial<PromotionPolicy>;
  sla?: Partial<SlaConfig>;
  created_at: string;
  updated_at: string;
}
