/**
 * The datasets a question is asked of: the ones it names (each must exist and be ready, else the
 * question is refused), or the session's dataset, or every dataset of the organization (the
 * implicit scope skips one still provisioning, and says so in the trace).
 */
import type { DatasetRecord } from '../catalog/datasets/record.js';
import type { DatasetService } from '../catalog/datasets/service.js';
import type { DatasetRows } from '../retrieval/rows.js';
import { viewOf, type DatasetView } from './plan/dataset-view.js';
import type { IntelligenceQuery } from './requests.js';
import type { SessionRecord } from './sessions/store.js';
import type { Scope, Work } from './work.js';

/**
 * The datasets in scope, checked now (a named dataset that does not exist or is not ready
 * refuses the question); their views are read by `describeScope` once the run has started.
 */
export function scopeOf(datasets: DatasetService, rowsOf: (r: DatasetRecord) => DatasetRows, orgId: string, b: IntelligenceQuery, session: SessionRecord | null): Scope {
  const pending: Scope['pending'] = [];
  const notes: string[] = [];
  if (b.dataset_ids) {
    for (const id of new Set(b.dataset_ids)) {
      const r = datasets.get(orgId, id);
      pending.push({ record: r, rows: rowsOf(r) });
    }
    return { views: new Map(), pending, notes };
  }
  const records = session?.dataset_id ? [datasets.get(orgId, session.dataset_id)] : datasets.list(orgId, Number.MAX_SAFE_INTEGER, 0).datasets;
  for (const r of records) {
    if (!datasets.isReady(r.id)) {
      notes.push(`dataset ${r.name} is being provisioned: not searched`);
      continue;
    }
    pending.push({ record: r, rows: rowsOf(r) });
  }
  return { views: new Map(), pending, notes };
}

/** Reads each dataset's fields and size into the scope's views (in the order they were named). */
export async function describeScope(scope: Scope): Promise<void> {
  const views = await Promise.all(scope.pending.map((p) => viewOf(p.record, p.rows)));
  for (const v of views) scope.views.set(v.record.id, v as DatasetView);
  scope.pending = [];
}

/** The resolve phase in the trace: the datasets in scope with their fields, and those skipped. */
export function announceScope(w: Work): void {
  const datasets = [...w.scope.views.values()].map((v) => ({
    id: v.record.id,
    name: v.record.name,
    vectors: v.vectorCount,
    fields: [...v.fields.values()].map((f) => ({ name: f.name, type: f.type })),
  }));
  w.run.event({
    phase: 'resolve',
    action: 'catalog.ready',
    status: datasets.length ? 'ok' : 'warning',
    summary: datasets.length ? `${datasets.length} dataset${datasets.length === 1 ? '' : 's'} in scope` : 'No dataset to search',
    detail: { datasets },
  });
  for (const note of w.scope.notes) w.run.event({ phase: 'resolve', action: 'catalog.skipped', status: 'warning', summary: note });
}
