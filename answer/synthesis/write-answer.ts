/**
 * One answer written from what a run gathered: as many chunks as the token budget holds become
 * the numbered sources; the aggregates computed are said first; then the model's answer when a
 * model is configured and answers, else (or when it fails before writing) the extractive one;
 * last, when a bound was hit, a note that coverage is incomplete. Every sentence's citations are
 * checked on the way out; what is returned tells how many held and which were dropped.
 */
import { coverageNote } from '../budget.js';
import { pastDeadline } from '../budget-trace.js';
import { ChatError } from '../llm/chat-client.js';
import type { Plan } from '../plan/planner.js';
import type { PreviewSigner } from '../preview-ref.js';
import { extractiveChunk, groupSources, sourceEntry, type SourceEntry } from '../sources.js';
import type { RetrievedChunk } from '../tools/context.js';
import type { Turn, Work } from '../work.js';
import { checkSentence, type CitedSource, type Dropped } from './citations.js';
import { computeSentence } from './compute-sentence.js';
import { pickSentences, type AnswerBounds, type ExtractiveSource } from './extractive.js';
import { generate } from './generative.js';

export interface WrittenAnswer {
  answerer: 'generative' | 'extractive';
  /** The chunks the answer was written from (those the token budget held). */
  context: RetrievedChunk[];
  sources: SourceEntry[];
  /** Citations that held, and those dropped with their reason. */
  markers: number;
  dropped: Dropped[];
  /** Said beside the answer: nothing answers, or the coverage is incomplete. */
  message: string | null;
}

type Cited = { name: string } & CitedSource;

export async function writeAnswer(previews: PreviewSigner, bounds: AnswerBounds, w: Work, p: Plan, history: Turn[]): Promise<WrittenAnswer> {
  const { run, budget } = w;
  run.event({ phase: 'synthesize', action: 'synthesis.started', status: 'started', summary: 'Writing the answer', detail: { answerer: w.model ? 'generative' : 'extractive' } });
  const context = withinTokens(w);
  const groups = groupSources(context);
  const sources = groups.map((g) => sourceEntry(g, w.orgId, previews));
  const cited: Cited[] = groups.map((g, i) => ({ name: sources[i].name, texts: g.chunks.map((c) => c.text) }));
  const rankOf = new Map(context.map((c, i) => [c, i]));
  const passages = groups.map((g) => ({ chunks: g.chunks.map((c) => extractiveChunk(c, rankOf.get(c) ?? context.length)) }));
  for (const c of w.computed) run.text(computeSentence(c, w.scope.views.get(c.dataset_id)!.record.name) + ' ');
  const out: WrittenAnswer = { answerer: 'extractive', context, sources, markers: 0, dropped: [], message: null };
  if (w.model && cited.length > 0 && !pastDeadline(w)) await generative(w, history, cited, out);
  if (out.answerer === 'extractive') extractive(bounds, w, p, passages, cited, out);
  if (budget.partial) {
    const note = coverageNote(budget.reasons);
    run.text(`${run.answer === '' ? '' : '\n\n'}${note}`);
    out.message ??= note;
  }
  return out;
}

/** The gathered chunks, in order, as many as the token budget holds. */
function withinTokens(w: Work): RetrievedChunk[] {
  const { run, budget } = w;
  const context: RetrievedChunk[] = [];
  for (const c of w.gathered) {
    if (!budget.spend(c.text)) break;
    context.push(c);
  }
  if (context.length < w.gathered.length) {
    run.event({ phase: 'synthesize', action: 'budget.tokens', status: 'warning', summary: `Token budget (${budget.limits.maxTokens}) reached: ${w.gathered.length - context.length} passage(s) left out`, detail: { max_tokens: budget.limits.maxTokens } });
  }
  return context;
}

/** The model's answer; a model that fails before writing leaves `out` extractive, one that fails part-way keeps what it wrote. */
async function generative(w: Work, history: Turn[], cited: Cited[], out: WrittenAnswer): Promise<void> {
  const { run, budget } = w;
  try {
    const g = await generate(w.model!, w.body.query, history, cited, budget, w.ctx.signal, (t) => run.text(t));
    out.answerer = 'generative';
    out.dropped = g.dropped;
    out.markers = g.markers;
    if (g.failedAfterText) {
      if (run.abort.signal.aborted) throw g.failedAfterText;
      if (!pastDeadline(w)) {
        budget.reasons.add('model_error');
        run.event({ phase: 'synthesize', action: 'model.failed', status: 'warning', summary: 'The model stopped part-way: the answer is what it wrote until then', detail: { message: g.failedAfterText.message } });
      }
    }
  } catch (e) {
    if (run.abort.signal.aborted) throw e;
    if (!pastDeadline(w)) {
      run.event({
        phase: 'synthesize',
        action: 'model.failed',
        status: 'warning',
        summary: `The model failed (${e instanceof ChatError ? e.kind : 'error'}): answered from the sources without it`,
        detail: { message: (e as Error).message, ...(e instanceof ChatError && e.retryAfterSeconds !== undefined ? { retry_after_seconds: e.retryAfterSeconds } : {}) },
      });
    }
  }
}

/** The sentences of the sources that answer the question, each with its citation checked. */
function extractive(bounds: AnswerBounds, w: Work, p: Plan, passages: ExtractiveSource[], cited: Cited[], out: WrittenAnswer): void {
  const { run } = w;
  // The sentences answer this question; the one it follows only widened the search.
  let picked = pickSentences(w.body.query, passages, bounds);
  if (picked.length === 0) picked = pickSentences(p.search_query, passages, bounds);
  const parts = picked.map((s) => checkSentence(`${s.text} [${s.source}]`, cited, true));
  for (const c of parts) {
    out.dropped.push(...c.dropped);
    out.markers += c.kept.length;
  }
  run.text(parts.map((c) => c.text).join(' '));
  if (picked.length === 0 && w.computed.length === 0) {
    out.message = w.scope.views.size === 0 ? 'There is no dataset to search.' : 'No passage of the datasets in scope matches the question.';
    run.text('I found nothing in the datasets in scope that answers this question.');
  }
}
