/**
 * The intelligence query: a question in, a cited answer out, as a run whose chunks stream while it
 * works. Every check that can refuse a question (body, scope, session, run id, load) happens in
 * `start`, before the first chunk; then the run goes through its phases: resolve the datasets,
 * plan, route (one pass or the tool loop), act (tools within the step, token and time bounds),
 * synthesize (a model's answer when one is configured and answers, else the extractive one),
 * citations checked, `citation` before `done`. Each phase lives in its own module; this one
 * holds their order.
 */
import { badRequest, SableError } from '../errors/codes.js';
import { modelSteps } from './act/model-steps.js';
import { plannedSteps } from './act/planned-steps.js';
import { Budget } from './budget.js';
import { appendQuestion, historyOf, sessionOf } from './conversation.js';
import { deliver } from './deliver.js';
import { plan } from './plan/planner.js';
import { announcePlan } from './plan/trace.js';
import type { IntelligenceQuery } from './requests.js';
import type { RunView } from './runs/run-view.js';
import { announceScope, describeScope, scopeOf } from './scope.js';
import type { AnswerBounds } from './synthesis/extractive.js';
import type { GenerativeModel } from './synthesis/generative.js';
import { writeAnswer } from './synthesis/write-answer.js';
import type { AnswerDeps, Work } from './work.js';

export type { AnswerDeps } from './work.js';

export interface LlmSettings {
  url: string;
  model: string;
  timeoutMs: number;
  /** The organization secret holding the endpoint's key, when the organization has one. */
  keySecret: string;
  /** The deployment's key (SABLE_LLM_API_KEY), used when the organization has none. */
  apiKey?: string;
}

export interface AnswerSettings {
  maxTokens: number;
  defaultMaxSteps: number;
  defaultDeadlineSeconds: number;
  /** Length bounds of an extractive answer. */
  extractive: AnswerBounds;
  llm: LlmSettings | null;
}

export class AnswerService {
  constructor(
    private readonly d: AnswerDeps,
    private readonly s: AnswerSettings,
  ) {}

  /** Starts a run, or re-attaches to the run of a caller-chosen id; the first chunk is out on return. */
  async start(orgId: string, b: IntelligenceQuery): Promise<{ run: RunView; reattached: boolean }> {
    if (b.dataset_id !== undefined) throw badRequest('dataset_id is retired on /intelligence/query: send dataset_ids (an array), or omit it to ask every dataset');
    if (b.query.trim() === '') throw badRequest('query is empty');
    if (b.run_id !== undefined) {
      const existing = await this.d.runs.lookup(orgId, b.run_id);
      if (existing) {
        if (existing.query !== b.query) throw new SableError('run_conflict', `run ${b.run_id} answers another question: choose another run_id`);
        return { run: existing, reattached: true };
      }
    }
    const session = b.session_id === undefined ? null : sessionOf(this.d.sessions, orgId, b.session_id);
    const scope = scopeOf(this.d.datasets, (r) => this.d.rowsOf(r), orgId, b, session);
    const mode = b.mode ?? 'auto';
    const run = this.d.runs.create(orgId, b.query, b.run_id);
    run.event({
      phase: 'received',
      action: 'query.received',
      status: 'ok',
      summary: 'Question received',
      detail: { mode, datasets: scope.views.size, answerer: this.s.llm ? 'generative' : 'extractive', ...(session ? { session_id: session.id } : {}) },
    });
    const budget = new Budget({
      maxSteps: mode === 'fast' ? 1 : (b.max_steps ?? this.s.defaultMaxSteps),
      maxTokens: this.s.maxTokens,
      // Whole milliseconds: AbortSignal.timeout throws on a fraction (deadline_seconds 13.7), and
      // thrown here the run stayed registered as running for ever (and held shutdown).
      deadlineMs: Math.round((b.deadline_seconds ?? this.s.defaultDeadlineSeconds) * 1000),
    });
    const signal = AbortSignal.any([run.abort.signal, budget.deadline]);
    const work: Work = {
      run,
      orgId,
      body: b,
      mode,
      session,
      scope,
      budget,
      ctx: { orgId, views: scope.views, caller: { filters: b.filters, advanced: b.advanced_filters }, signal },
      gathered: [],
      computed: [],
      model: this.model(orgId),
    };
    void this.execute(work);
    return { run, reattached: false };
  }

  private model(orgId: string): GenerativeModel | null {
    const llm = this.s.llm;
    if (!llm) return null;
    let apiKey = llm.apiKey;
    try {
      apiKey = this.d.revealSecret(orgId, llm.keySecret) ?? apiKey;
    } catch {
      // An unreadable organization secret leaves the deployment's key.
    }
    return { settings: { url: llm.url, model: llm.model, timeoutMs: llm.timeoutMs }, apiKey };
  }

  private async execute(w: Work): Promise<void> {
    const { run } = w;
    try {
      // The caller gets the first chunk before any of the work below starts.
      await new Promise((resolve) => setImmediate(resolve));
      const history = historyOf(this.d.sessions, w);
      await appendQuestion(this.d.sessions, w);
      await describeScope(w.scope);
      announceScope(w);
      const p = plan({ question: w.body.query, history, mode: w.mode, datasets: [...w.scope.views.values()] });
      const agentic = w.model !== null && p.path === 'tool_loop';
      announcePlan(run, p, agentic, [...w.scope.views.keys()]);
      if (w.scope.views.size > 0) {
        if (agentic) await modelSteps(this.d, w, p, history);
        if (w.gathered.length === 0 && w.computed.length === 0) await plannedSteps(this.d, w, p);
      }
      const answer = await writeAnswer(this.d.previews, this.s.extractive, w, p, history);
      await deliver(this.d.sessions, w, p, answer);
    } catch (e) {
      this.end(w, e);
    }
  }

  /** A run that stopped: cancelled when its caller left (or the service stops), else failed. */
  private end(w: Work, e: unknown): void {
    const { run } = w;
    if (!run.running) return;
    if (run.abort.signal.aborted) {
      run.event({ phase: 'done', action: 'run.cancelled', status: 'error', summary: `Cancelled: ${(run.abort.signal.reason as Error)?.message ?? 'aborted'}` });
      run.finish('cancelled');
      return;
    }
    const code = e instanceof SableError ? e.code : 'internal';
    const message = e instanceof SableError ? e.message : 'the question could not be answered (internal error)';
    if (!(e instanceof SableError)) console.error(`sable: run ${run.id} failed:`, e);
    run.failure = { code, message };
    run.chunk('error', message, { code });
    run.event({ phase: 'done', action: 'run.failed', status: 'error', summary: message, detail: { code } });
    run.finish('failed', { error: code });
  }
}
