/**
 * What the model is told before the tool loop: the tools' purpose, the datasets in scope with
 * their fields and types (and which dates cannot be range-filtered), and the planner's notes.
 */
import type { DatasetView } from '../plan/dataset-view.js';

export function agentPrompt(views: Iterable<DatasetView>, plannerNotes: string[]): string {
  const lines = [...views].map(
    (v) => `- dataset_id ${v.record.id} "${v.record.name}" (${v.vectorCount} vectors); fields: ${[...v.fields.values()].map((f) => `${f.name} ${f.type}${f.dateLike && !f.numeric ? ' (dates as strings: no range filters)' : ''}`).join(', ') || 'none'}`,
  );
  return (
    'You gather what is needed to answer a question from these datasets, using the tools: search for passages, read_document for a whole document, ' +
    'compute for counts and aggregates over metadata. Filters may only name the fields listed; range operators need numeric fields. ' +
    `Stop calling tools once you have enough; the answer is written afterwards.\n\nDatasets:\n${lines.join('\n')}` +
    (plannerNotes.length ? `\n\nPlanner notes:\n${plannerNotes.map((n) => `- ${n}`).join('\n')}` : '')
  );
}
