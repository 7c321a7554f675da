/**
 * The planner's steps, run when no model chose the tools (or it gathered nothing): one search,
 * then on the tool loop the top document read whole and each dataset's aggregate, within bounds.
 */
import type { Plan } from '../plan/planner.js';
import type { AnswerDeps, Work } from '../work.js';
import { pastDeadline, takeStep } from '../budget-trace.js';
import { computeStep, readDocumentStep, searchStep } from './tool-steps.js';

export async function plannedSteps(d: AnswerDeps, w: Work, p: Plan): Promise<void> {
  if (!takeStep(w, 'search')) return;
  const filters = new Map(p.datasets.map((ds) => [ds.dataset_id, ds.filters]));
  await searchStep(d, w, p.search_query, filters);
  if (p.path !== 'tool_loop') return;
  if (p.read_document) {
    const top = w.gathered.find((c) => typeof c.metadata.document_id === 'string');
    if (top && !pastDeadline(w) && takeStep(w, 'read_document')) await readDocumentStep(d, w, top.dataset_id, String(top.metadata.document_id));
  }
  for (const ds of p.datasets) {
    if (!ds.compute) continue;
    if (pastDeadline(w) || !takeStep(w, 'compute')) break;
    await computeStep(w, ds.dataset_id, ds.compute, ds.filters);
  }
}
