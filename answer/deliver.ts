/**
 * The end of a run that answered, in the contract's order: the citation check in the trace, the
 * `citation` chunk (the sources), the `metadata` chunk and the whole result (what a JSON request
 * gets), `run.done`; then the answer and the trace appended to the session, and `done`.
 */
import { appendAnswer } from './conversation.js';
import { planDetail } from './plan/trace.js';
import type { Plan } from './plan/planner.js';
import type { SessionStore } from './sessions/store.js';
import { chunkEntry } from './sources.js';
import type { WrittenAnswer } from './synthesis/write-answer.js';
import type { Work } from './work.js';

export async function deliver(sessions: SessionStore, w: Work, p: Plan, a: WrittenAnswer): Promise<void> {
  const { run, budget, body } = w;
  const { sources, dropped, markers } = a;
  run.event({
    phase: 'synthesize',
    action: 'citations.checked',
    status: dropped.length ? 'warning' : 'ok',
    summary: `${markers} citation${markers === 1 ? '' : 's'} checked${dropped.length ? `, ${dropped.length} dropped` : ''}`,
    detail: { kept: markers, dropped },
  });
  const includeSources = body.include_sources ?? true;
  run.chunk('citation', `${sources.length} source${sources.length === 1 ? '' : 's'}`, {
    sources: includeSources ? sources : sources.map((s) => ({ name: s.name, relevance: s.relevance, dataset_id: s.dataset_id, dataset_document_id: s.dataset_document_id })),
  });
  const metadata = {
    run_id: run.id,
    status: 'succeeded',
    mode: w.mode,
    path: p.path,
    answerer: a.answerer,
    ...(a.answerer === 'generative' ? { model: w.model!.settings.model } : {}),
    partial: budget.partial,
    budget: budget.summary(),
    plan: planDetail(p),
    warnings: [...w.scope.notes, ...p.notes],
    computed: w.computed,
  };
  run.result = { answer: run.answer, sources: includeSources ? sources : [], chunks: includeSources ? a.context.map(chunkEntry) : [], message: a.message, metadata };
  run.chunk('metadata', '', metadata);
  run.event({ phase: 'done', action: 'run.done', status: budget.partial ? 'warning' : 'ok', summary: budget.partial ? 'Answered, with incomplete coverage' : 'Answered', ms: budget.elapsedMs() });
  await appendAnswer(sessions, w, sources);
  run.finish('succeeded', { partial: budget.partial, ...(budget.partial ? { degraded_reasons: [...budget.reasons] } : {}) });
}
