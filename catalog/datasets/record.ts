/**
 * The API's dataset object as stored in the control store (the engine keeps its own manifest of
 * the dataset's vectors: engine/lmdb-store.ts, DatasetManifest).
 */
import type { ColumnType, IndexType, Metric, TuningInEffect } from '../../engine/index.js';

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
  created_at: string;
  updated_at: string;
}

/**
 * The record as the API shows it: internal fields dropped, schema omitted when empty, tuning as
 * in effect (the engine's view; `null` fields of the record follow the data).
 */
export function publicDataset(r: DatasetRecord, ready: boolean, tuning: TuningInEffect): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: r.id,
    name: r.name,
    org_id: r.org_id,
    dim: r.dim,
    metric: r.metric,
    tuning,
    embedding: { provider: r.embedding.provider, model: r.embedding.model, ...(r.embedding.secret_ref ? { secret_ref: r.embedding.secret_ref } : {}) },
    index_type: r.index_type,
    hybrid: r.hybrid.enabled,
    metadata: r.metadata,
    status: ready ? 'ready' : 'provisioning',
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
  if (r.schema.length > 0) {
    out.schema = r.schema;
    out.schema_version = r.schema_version;
  }
  return out;
}
