/** A plan as the trace and the answer's metadata show it: one line for people, the detail for programs. */
import type { Run } from '../runs/run.js';
import type { Plan } from './planner.js';

/** The plan and route phases in the trace: the plan, the planner's notes, and the path taken. */
export function announcePlan(run: Run, p: Plan, agentic: boolean, datasetIds: string[]): void {
  run.event({ phase: 'plan', action: 'plan.ready', status: 'ok', summary: describePlan(p), detail: planDetail(p) });
  for (const note of p.notes) run.event({ phase: 'plan', action: 'plan.note', status: 'warning', summary: note });
  run.event({
    phase: 'route',
    action: 'route.ready',
    status: 'ok',
    summary: p.path === 'single_pass' ? 'One retrieval pass' : agentic ? 'Tool loop, the model choosing the tools' : 'Tool loop',
    detail: { path: p.path, datasets: datasetIds },
  });
}

function describePlan(p: Plan): string {
  const filters = p.datasets.reduce((n, d) => n + d.filters.length, 0);
  const parts = [p.intent === 'compute' ? 'compute over metadata' : p.intent === 'read_document' ? 'read a whole document' : 'look up passages'];
  if (filters) parts.push(`${filters} filter${filters === 1 ? '' : 's'} from the question`);
  return `Plan: ${parts.join(', ')}`;
}

export function planDetail(p: Plan) {
  return { path: p.path, intent: p.intent, search_query: p.search_query, read_document: p.read_document, datasets: p.datasets, notes: p.notes };
}
