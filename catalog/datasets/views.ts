/** Dataset records and engine states as the API shows them: every dataset answer's shape, here. */
import type { DatasetStats, SlaStatus, TuningInEffect } from '../../engine/index.js';
import type { DatasetRecord } from './record.js';

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

/** The SLA and the tuner's state (GET and PUT /datasets/{id}/sla). */
export function slaView(s: SlaStatus) {
  return {
    target_p99_us: s.target_p99_us,
    min_nprobe: s.min_nprobe,
    max_nprobe_fraction: s.max_nprobe_fraction,
    min_beam_width: s.min_beam_width,
    max_beam_width: s.max_beam_width,
    observed_p99_us: s.observed_p99_us,
    current_nprobe: s.current_nprobe,
    current_beam_width: s.current_beam_width,
  };
}

/** The index's state (GET /datasets/{id}/index, and the rebuild answers). */
export function indexView(s: DatasetStats) {
  return {
    index_type: s.index_type,
    status: s.index_status,
    progress: s.index_status === 'ready' ? 100 : s.progress,
    partitions: s.partitions,
    built_at: s.built_at,
  };
}
