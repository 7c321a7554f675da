/**
 * The intelligence query: a question in, a cited answer out, as a run whose chunks stream while it
 * works. Every check that can refuse a question (body, scope, session, run id, load) happens in
 * `start`, before the first chunk; then the run goes through its phases: resolve the datasets,
 * plan, route (one pass or the tool loop), act (tools within the step, token and time bounds),
 * synthesize (a model's answer when one is configured and answers, else the extractive one),
 * citations checked, `citation` before `done`.
 */
import type { DatasetService } from '../catalog/datasets/service.js';
import type { DocumentStore } from '../catalog/documents/store.js';
import { badRequest, SableError } from '../errors/codes.js';
import type { SearchService } from '../retrieval/search.js';
import { Budget, coverageNote } from './budget.js';
import { agentLoop } from './llm/agent.js';
import { ChatError, type ChatMessage, type ToolCall } from './llm/chat-client.js';
import { viewOf, type DatasetView } from './plan/dataset-view.js';
import { plan, type Plan } from './plan/planner.js';
import { checkFilters, computeProblem, type ComputeSpec } from './plan/validate.js';
import type { PreviewSigner } from './preview-ref.js';
import type { IntelligenceQuery, Mode } from './requests.js';
import type { Run } from './runs/run.js';
import type { RunStore } from './runs/run-store.js';
import type { SessionRecord, SessionStore } from './sessions/store.js';
import { chunkEntry, extractiveChunk, groupSources, sourceEntry } from './sources.js';
import { checkSentence, type Dropped } from './synthesis/citations.js';
import { pickSentences, type AnswerBounds } from './synthesis/extractive.js';
import { generate, type GenerativeModel } from './synthesis/generative.js';
import { computeTool, type ComputeResult } from './tools/compute.js';
import type { RetrievedChunk, ToolContext } from './tools/context.js';
import { readDocumentTool } from './tools/read-document.js';
import { searchTool } from './tools/search.js';
import type { AdvancedFilter } from '../engine/index.js';

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

export interface AnswerDeps {
  datasets: DatasetService;
  search: SearchService;
  documents: DocumentStore;
  sessions: SessionStore;
  runs: RunStore;
  previews: PreviewSigner;
  revealSecret(orgId: string, ref: string): string | undefined;
}

interface Scope {
  views: Map<string, DatasetView>;
  notes: string[];
}

interface Work {
  run: Run;
  orgId: string;
  body: IntelligenceQuery;
  mode: Mode;
  session: SessionRecord | null;
  scope: Scope;
  budget: Budget;
  ctx: ToolContext;
  gathered: RetrievedChunk[];
  computed: ComputeResult[];
  model: GenerativeModel | null;
}

const SESSION_HISTORY = 20;

export class AnswerService {
  constructor(
    private readonly d: AnswerDeps,
    private readonly s: AnswerSettings,
  ) {}

  /** Starts a run, or re-attaches to the run of a caller-chosen id; the first chunk is out on return. */
  start(orgId: string, b: IntelligenceQuery): { run: Run; reattached: boolean } {
    if (b.dataset_id !== undefined) throw badRequest('dataset_id is retired on /intelligence/query: send dataset_ids (an array), or omit it to ask every dataset');
    if (b.query.trim() === '') throw badRequest('query is empty');
    if (b.run_id !== undefined) {
      const existing = this.d.runs.get(orgId, b.run_id);
      if (existing) {
        if (existing.query !== b.query) throw new SableError('run_conflict', `run ${b.run_id} answers another question: choose another run_id`);
        return { run: existing, reattached: true };
      }
    }
    const session = b.session_id === undefined ? null : this.session(orgId, b.session_id);
    const scope = this.scope(orgId, b, session);
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

  private session(orgId: string, id: string): SessionRecord {
    const s = this.d.sessions.get(orgId, id);
    if (!s) throw new SableError('session_not_found', `session ${id} was not found`);
    return s;
  }

  /** The datasets asked about: named ones must exist and be ready; the implicit scope skips what is not. */
  private scope(orgId: string, b: IntelligenceQuery, session: SessionRecord | null): Scope {
    const views = new Map<string, DatasetView>();
    const notes: string[] = [];
    if (b.dataset_ids) {
      for (const id of new Set(b.dataset_ids)) {
        const r = this.d.datasets.get(orgId, id);
        views.set(r.id, viewOf(r, this.d.datasets.engineOf(r)));
      }
      return { views, notes };
    }
    const records = session?.dataset_id ? [this.d.datasets.get(orgId, session.dataset_id)] : this.d.datasets.list(orgId, Number.MAX_SAFE_INTEGER, 0).datasets;
    for (const r of records) {
      if (!this.d.datasets.isReady(r.id)) {
        notes.push(`dataset ${r.name} is being provisioned: not searched`);
        continue;
      }
      views.set(r.id, viewOf(r, this.d.datasets.engineOf(r)));
    }
    return { views, notes };
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
      const history = this.history(w);
      if (w.session) await this.d.sessions.append(w.orgId, w.session.id, [{ role: 'user', content: w.body.query, metadata: { run_id: run.id } }]);
      this.resolve(w);
      const p = plan({ question: w.body.query, history, mode: w.mode, datasets: [...w.scope.views.values()] });
      run.event({ phase: 'plan', action: 'plan.ready', status: 'ok', summary: describePlan(p), detail: planDetail(p) });
      for (const note of p.notes) run.event({ phase: 'plan', action: 'plan.note', status: 'warning', summary: note });
      const agentic = w.model !== null && p.path === 'tool_loop';
      run.event({
        phase: 'route',
        action: 'route.ready',
        status: 'ok',
        summary: p.path === 'single_pass' ? 'One retrieval pass' : agentic ? 'Tool loop, the model choosing the tools' : 'Tool loop',
        detail: { path: p.path, datasets: [...w.scope.views.keys()] },
      });
      if (w.scope.views.size > 0) {
        if (agentic) await this.agent(w, p, history);
        if (w.gathered.length === 0 && w.computed.length === 0) await this.planned(w, p);
      }
      await this.synthesize(w, p, history);
    } catch (e) {
      this.end(w, e);
    }
  }

  private history(w: Work): { role: 'user' | 'assistant'; content: string }[] {
    if (w.body.conversation_history) return w.body.conversation_history;
    if (!w.session) return [];
    return this.d.sessions
      .messagesOf(w.session.id, SESSION_HISTORY)
      .filter((m): m is typeof m & { role: 'user' | 'assistant' } => m.role === 'user' || m.role === 'assistant')
      .map((m) => ({ role: m.role, content: m.content }));
  }

  private resolve(w: Work): void {
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

  /** The planner's steps: one search, then (tool loop) the top document read whole and the aggregates. */
  private async planned(w: Work, p: Plan): Promise<void> {
    if (!this.takeStep(w, 'search')) return;
    const filters = new Map(p.datasets.map((d) => [d.dataset_id, d.filters]));
    await this.search(w, p.search_query, filters);
    if (p.path !== 'tool_loop') return;
    if (p.read_document) {
      const top = w.gathered.find((c) => typeof c.metadata.document_id === 'string');
      if (top && !this.pastDeadline(w) && this.takeStep(w, 'read_document')) this.readDocument(w, top.dataset_id, String(top.metadata.document_id));
    }
    for (const d of p.datasets) {
      if (!d.compute) continue;
      if (this.pastDeadline(w) || !this.takeStep(w, 'compute')) break;
      this.compute(w, d.dataset_id, d.compute, d.filters);
    }
  }

  private takeStep(w: Work, tool: string): boolean {
    if (w.budget.step()) return true;
    w.run.event({
      phase: 'act',
      action: 'budget.max_steps',
      status: 'warning',
      summary: `Step limit (${w.budget.limits.maxSteps}) reached: ${tool} not run`,
      tool,
      detail: { max_steps: w.budget.limits.maxSteps },
    });
    return false;
  }

  private pastDeadline(w: Work): boolean {
    if (!w.budget.expired()) return false;
    if (!w.run.events.some((e) => e.action === 'budget.deadline')) {
      w.run.event({ phase: 'act', action: 'budget.deadline', status: 'warning', summary: 'Deadline reached: answering from what was gathered', detail: { deadline_ms: w.budget.limits.deadlineMs } });
    }
    return true;
  }

  private async search(w: Work, query: string, filters: Map<string, AdvancedFilter[]>, datasetIds?: string[]): Promise<RetrievedChunk[]> {
    const { run, budget } = w;
    const step = budget.steps;
    const topK = w.body.top_k ?? 5;
    run.event({ phase: 'act', action: 'tool.search', status: 'started', summary: `Searching for "${clip(query, 80)}"`, step, tool: 'search', detail: { query } });
    const t0 = Date.now();
    let out = await searchTool(this.d.search, w.ctx, { query, top_k: topK, filters, dataset_ids: datasetIds });
    const plannedFilters = [...filters.values()].some((f) => f.length > 0);
    if (out.chunks.length === 0 && plannedFilters) {
      run.event({ phase: 'act', action: 'tool.search', status: 'warning', summary: "The question's filters matched nothing: searching without them (the caller's filters stay)", step, tool: 'search' });
      out = await searchTool(this.d.search, w.ctx, { query, top_k: topK, filters: new Map(), dataset_ids: datasetIds });
    }
    w.gathered.push(...out.chunks);
    const failed = out.perDataset.filter((d) => d.error);
    run.event({
      phase: 'act',
      action: 'tool.search',
      status: failed.length === out.perDataset.length && failed.length > 0 ? 'error' : failed.length ? 'warning' : 'ok',
      summary: `${out.chunks.length} passage${out.chunks.length === 1 ? '' : 's'} found`,
      step,
      tool: 'search',
      ms: Date.now() - t0,
      detail: { query, results: out.perDataset },
    });
    return out.chunks;
  }

  private readDocument(w: Work, datasetId: string, documentId: string): RetrievedChunk[] {
    const { run, budget } = w;
    const step = budget.steps;
    run.event({ phase: 'act', action: 'tool.read_document', status: 'started', summary: 'Reading the whole document', step, tool: 'read_document', detail: { dataset_id: datasetId, document_id: documentId } });
    const t0 = Date.now();
    const read = readDocumentTool(this.d.documents, w.ctx, datasetId, documentId);
    w.gathered.push(...read.chunks);
    run.event({
      phase: 'act',
      action: 'tool.read_document',
      status: read.chunks.length === 0 ? 'warning' : 'ok',
      summary: `Read ${read.name ?? documentId}: ${read.chunks.length} chunk${read.chunks.length === 1 ? '' : 's'}${read.truncated ? ' (cut)' : ''}`,
      step,
      tool: 'read_document',
      ms: Date.now() - t0,
      detail: { dataset_id: datasetId, document_id: documentId, name: read.name, chunks: read.chunks.length, truncated: read.truncated },
    });
    return read.chunks;
  }

  private compute(w: Work, datasetId: string, spec: ComputeSpec, filters: AdvancedFilter[]): ComputeResult {
    const { run, budget } = w;
    const step = budget.steps;
    const view = w.scope.views.get(datasetId)!;
    run.event({ phase: 'act', action: 'tool.compute', status: 'started', summary: `Computing ${spec.op}${spec.field ? ` of ${spec.field}` : ''} in ${view.record.name}`, step, tool: 'compute', detail: { dataset_id: datasetId, ...spec, filters } });
    const t0 = Date.now();
    const result = computeTool(w.ctx, datasetId, spec, filters);
    w.computed.push(result);
    const sentence = computeSentence(result, view.record.name);
    run.event({ phase: 'act', action: 'tool.compute', status: result.truncated ? 'warning' : 'ok', summary: sentence, step, tool: 'compute', ms: Date.now() - t0, detail: { ...result } });
    run.chunk('artifact', sentence, {
      kind: 'table',
      dataset_id: datasetId,
      columns: result.groups ? [result.group_by, result.op, 'rows'] : [result.op, 'rows'],
      rows: result.groups ? result.groups.map((g) => [g.key, g.value, g.rows]) : [[result.value, result.rows]],
    });
    return result;
  }

  /** The model chooses the tools; a failing model leaves the planner's steps to run instead. */
  private async agent(w: Work, p: Plan, history: { role: 'user' | 'assistant'; content: string }[]): Promise<void> {
    const { run } = w;
    try {
      await agentLoop(w.model!, agentPrompt(w, p), w.body.query, history.map((h) => ({ role: h.role, content: h.content }) as ChatMessage), w.budget, w.ctx.signal, {
        canStep: () => !this.pastDeadline(w) && this.takeStep(w, 'a tool the model asked for'),
        runTool: (call) => this.runModelTool(w, call),
      });
    } catch (e) {
      if (run.abort.signal.aborted) throw e;
      if (this.pastDeadline(w)) return;
      run.event({ phase: 'act', action: 'model.failed', status: 'warning', summary: `The model failed (${e instanceof ChatError ? e.kind : 'error'}): the planner's steps run instead`, detail: { message: (e as Error).message } });
    }
  }

  private async runModelTool(w: Work, call: ToolCall): Promise<string> {
    let args: Record<string, unknown>;
    try {
      args = JSON.parse(call.function.arguments || '{}');
    } catch {
      return 'error: the arguments are not JSON';
    }
    const refuse = (message: string) => {
      w.run.event({ phase: 'act', action: `tool.${call.function.name}`, status: 'error', summary: message, step: w.budget.steps, tool: call.function.name });
      return `error: ${message}`;
    };
    const datasetId = typeof args.dataset_id === 'string' ? args.dataset_id : undefined;
    if (datasetId !== undefined && !w.scope.views.has(datasetId)) return refuse(`dataset ${datasetId} is not in scope`);
    const asked = Array.isArray(args.filters) ? (args.filters as AdvancedFilter[]) : [];
    const filtersFor = (id: string) => {
      const checked = checkFilters(w.scope.views.get(id)!, asked);
      for (const d of checked.dropped) w.run.event({ phase: 'plan', action: 'plan.filter_dropped', status: 'warning', summary: d.reason, detail: { filter: d.item } });
      return checked.kept;
    };
    switch (call.function.name) {
      case 'search': {
        if (typeof args.query !== 'string' || args.query.trim() === '') return refuse('search needs a query');
        const ids = datasetId ? [datasetId] : [...w.scope.views.keys()];
        const chunks = await this.search(w, args.query, new Map(ids.map((id) => [id, filtersFor(id)])), ids);
        return chunks.map((c) => `document_id=${String(c.metadata.document_id ?? '')} dataset_id=${c.dataset_id} ${String(c.metadata.name ?? c.chunk_id)}: ${clip(c.text, 600)}`).join('\n\n') || 'no passage found';
      }
      case 'read_document': {
        if (!datasetId || typeof args.document_id !== 'string') return refuse('read_document needs dataset_id and document_id');
        const chunks = this.readDocument(w, datasetId, args.document_id);
        return clip(chunks.map((c) => c.text).join('\n'), Math.max(400, w.budget.left() * 4)) || 'the document has no readable chunk';
      }
      case 'compute': {
        if (!datasetId) return refuse('compute needs dataset_id');
        const spec: ComputeSpec = { op: args.op as ComputeSpec['op'], ...(typeof args.field === 'string' ? { field: args.field } : {}), ...(typeof args.group_by === 'string' ? { group_by: args.group_by } : {}) };
        const problem = computeProblem(w.scope.views.get(datasetId)!, spec);
        if (problem) return refuse(problem);
        return JSON.stringify(this.compute(w, datasetId, spec, filtersFor(datasetId)));
      }
      default:
        return refuse(`no tool named ${call.function.name}`);
    }
  }

  private async synthesize(w: Work, p: Plan, history: { role: 'user' | 'assistant'; content: string }[]): Promise<void> {
    const { run, budget, body } = w;
    const answerer = w.model ? 'generative' : 'extractive';
    run.event({ phase: 'synthesize', action: 'synthesis.started', status: 'started', summary: 'Writing the answer', detail: { answerer } });
    // The context the answer is written from: as many gathered chunks as the token budget holds.
    const context: RetrievedChunk[] = [];
    for (const c of w.gathered) {
      if (!budget.spend(c.text)) break;
      context.push(c);
    }
    if (context.length < w.gathered.length) {
      run.event({ phase: 'synthesize', action: 'budget.tokens', status: 'warning', summary: `Token budget (${budget.limits.maxTokens}) reached: ${w.gathered.length - context.length} passage(s) left out`, detail: { max_tokens: budget.limits.maxTokens } });
    }
    const groups = groupSources(context);
    const sources = groups.map((g) => sourceEntry(g, w.orgId, this.d.previews));
    const cited = groups.map((g, i) => ({ name: sources[i].name, texts: g.chunks.map((c) => c.text) }));
    const rankOf = new Map(context.map((c, i) => [c, i]));
    const passages = groups.map((g) => ({ chunks: g.chunks.map((c) => extractiveChunk(c, rankOf.get(c) ?? context.length)) }));
    for (const c of w.computed) run.text(computeSentence(c, w.scope.views.get(c.dataset_id)!.record.name) + ' ');
    let used: 'generative' | 'extractive' = 'extractive';
    let dropped: Dropped[] = [];
    let markers = 0;
    if (w.model && cited.length > 0 && !this.pastDeadline(w)) {
      try {
        const g = await generate(w.model, body.query, history, cited, budget, w.ctx.signal, (t) => run.text(t));
        used = 'generative';
        dropped = g.dropped;
        markers = g.markers;
        if (g.failedAfterText) {
          if (run.abort.signal.aborted) throw g.failedAfterText;
          if (!this.pastDeadline(w)) {
            budget.reasons.add('model_error');
            run.event({ phase: 'synthesize', action: 'model.failed', status: 'warning', summary: 'The model stopped part-way: the answer is what it wrote until then', detail: { message: g.failedAfterText.message } });
          }
        }
      } catch (e) {
        if (run.abort.signal.aborted) throw e;
        if (!this.pastDeadline(w)) {
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
    let message: string | null = null;
    if (used === 'extractive') {
      // The sentences answer this question; the one it follows only widened the search.
      let picked = pickSentences(body.query, passages, this.s.extractive);
      if (picked.length === 0) picked = pickSentences(p.search_query, passages, this.s.extractive);
      const parts = picked.map((s) => checkSentence(`${s.text} [${s.source}]`, cited, true));
      for (const c of parts) {
        dropped.push(...c.dropped);
        markers += c.kept.length;
      }
      run.text(parts.map((c) => c.text).join(' '));
      if (picked.length === 0 && w.computed.length === 0) {
        message = w.scope.views.size === 0 ? 'There is no dataset to search.' : 'No passage of the datasets in scope matches the question.';
        run.text('I found nothing in the datasets in scope that answers this question.');
      }
    }
    if (budget.partial) {
      const note = coverageNote(budget.reasons);
      run.text(`${run.answer === '' ? '' : '\n\n'}${note}`);
      message ??= note;
    }
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
      answerer: used,
      ...(used === 'generative' ? { model: w.model!.settings.model } : {}),
      partial: budget.partial,
      budget: budget.summary(),
      plan: planDetail(p),
      warnings: [...w.scope.notes, ...p.notes],
      computed: w.computed,
    };
    run.result = { answer: run.answer, sources: includeSources ? sources : [], chunks: includeSources ? context.map(chunkEntry) : [], message, metadata };
    run.chunk('metadata', '', metadata);
    run.event({ phase: 'done', action: 'run.done', status: budget.partial ? 'warning' : 'ok', summary: budget.partial ? 'Answered, with incomplete coverage' : 'Answered', ms: budget.elapsedMs() });
    if (w.session) {
      await this.d.sessions.append(
        w.orgId,
        w.session.id,
        [{ role: 'assistant', content: run.answer, metadata: { run_id: run.id, partial: budget.partial, sources: sources.map((s) => ({ name: s.name, dataset_id: s.dataset_id, dataset_document_id: s.dataset_document_id })) } }],
        run.events.map((e) => ({ ...e, run_id: run.id })),
      );
    }
    run.finish('succeeded', { partial: budget.partial, ...(budget.partial ? { degraded_reasons: [...budget.reasons] } : {}) });
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

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

function describePlan(p: Plan): string {
  const filters = p.datasets.reduce((n, d) => n + d.filters.length, 0);
  const parts = [p.intent === 'compute' ? 'compute over metadata' : p.intent === 'read_document' ? 'read a whole document' : 'look up passages'];
  if (filters) parts.push(`${filters} filter${filters === 1 ? '' : 's'} from the question`);
  return `Plan: ${parts.join(', ')}`;
}

function planDetail(p: Plan) {
  return { path: p.path, intent: p.intent, search_query: p.search_query, read_document: p.read_document, datasets: p.datasets, notes: p.notes };
}

function agentPrompt(w: Work, p: Plan): string {
  const lines = [...w.scope.views.values()].map(
    (v) => `- dataset_id ${v.record.id} "${v.record.name}" (${v.vectorCount} vectors); fields: ${[...v.fields.values()].map((f) => `${f.name} ${f.type}${f.dateLike && !f.numeric ? ' (dates as strings: no range filters)' : ''}`).join(', ') || 'none'}`,
  );
  return (
    'You gather what is needed to answer a question from these datasets, using the tools: search for passages, read_document for a whole document, ' +
    'compute for counts and aggregates over metadata. Filters may only name the fields listed; range operators need numeric fields. ' +
    `Stop calling tools once you have enough; the answer is written afterwards.\n\nDatasets:\n${lines.join('\n')}` +
    (p.notes.length ? `\n\nPlanner notes:\n${p.notes.map((n) => `- ${n}`).join('\n')}` : '')
  );
}

function computeSentence(r: ComputeResult, dataset: string): string {
  const of = r.field ? ` ${r.field}` : '';
  const scope = `${r.rows} matching record${r.rows === 1 ? '' : 's'} of ${dataset}${r.truncated ? ' (the first ones read; more exist)' : ''}`;
  const head =
    r.op === 'count'
      ? `${dataset} has ${r.rows}${r.truncated ? '+' : ''} matching record${r.rows === 1 ? '' : 's'}.`
      : r.value === null
        ? `No value of${of} was found over ${scope}.`
        : `The ${({ sum: 'total', avg: 'average', min: 'minimum', max: 'maximum' } as const)[r.op]}${of} over ${scope} is ${r.value}.`;
  if (!r.groups) return head;
  return `${head} By ${r.group_by}: ${r.groups.map((g) => `${g.key} ${g.value ?? 'n/a'}${r.op === 'count' ? '' : ` (${g.rows})`}`).join(', ')}.`;
}

