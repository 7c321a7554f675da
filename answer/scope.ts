/**
 * The datasets a question is asked of: the ones it names (each must exist and be ready, else the
 * question is refused), or the session's dataset, or every dataset of the organization (the
 * implicit scope skips one still provisioning, and says so in the trace).
 */
import type { DatasetService } from '../catalog/datasets/service.js';
import { viewOf, type DatasetView } from './plan/dataset-view.js';
import type { IntelligenceQuery } from './requests.js';
import type { SessionRecord } from './sessions/store.js';
import type { Scope, Work } from './work.js';

export function scopeOf(datasets: DatasetService, orgId: string, b: IntelligenceQuery, session: SessionRecord | null): Scope {
  const views = new Map<string, DatasetView>();
  const notes: string[] = [];
  if (b.dataset_ids) {
    for (const id of new Set(b.dataset_ids)) {
      const r = datasets.get(orgId, id);
      views.set(r.id, viewOf(r, datasets.engineOf(r)));
    }
    return { views, notes };
  }
  const records = session?.dataset_id ? [datasets.get(orgId, session.dataset_id)] : datasets.list(orgId, Number.MAX_SAFE_INTEGER, 0).datasets;
  for (const r of records) {
    if (!datasets.isReady(r.id)) {
      notes.push(`dataset ${r.name} is being provisioned: not searched`);
      continue;
    }
    views.set(r.id, viewOf(r, datasets.engineOf(r)));
  }
  return { views, notes };
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
