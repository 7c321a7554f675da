/**
 * The model's steps: the model chooses the tools (llm/agent.ts runs the loop), and each call it
 * makes is checked before it runs: its arguments against the tool's schema (llm/model-tools.ts),
 * its dataset against the scope, its filters and aggregate against the dataset's fields. A call
 * refused is traced and its reason read back to the model; a model that fails leaves the
 * planner's steps to run instead.
 */
import type { AdvancedFilter } from '../../engine/index.js';
import { agentLoop } from '../llm/agent.js';
import { agentPrompt } from '../llm/agent-prompt.js';
import { ChatError, type ChatMessage, type ToolCall } from '../llm/chat-client.js';
import { checkToolCall } from '../llm/model-tools.js';
import type { Plan } from '../plan/planner.js';
import { checkFilters, computeProblem, type ComputeSpec } from '../plan/validate.js';
import type { AnswerDeps, Turn, Work } from '../work.js';
import { pastDeadline, takeStep } from '../budget-trace.js';
import { clip, computeStep, readDocumentStep, searchStep } from './tool-steps.js';

export async function modelSteps(d: AnswerDeps, w: Work, p: Plan, history: Turn[]): Promise<void> {
  const { run } = w;
  try {
    await agentLoop(w.model!, agentPrompt(w.scope.views.values(), p.notes), w.body.query, history.map((h) => ({ role: h.role, content: h.content }) as ChatMessage), w.budget, w.ctx.signal, {
      canStep: () => !pastDeadline(w) && takeStep(w, 'a tool the model asked for'),
      runTool: (call) => runModelTool(d, w, call),
    });
  } catch (e) {
    if (run.abort.signal.aborted) throw e;
    if (pastDeadline(w)) return;
    run.event({ phase: 'act', action: 'model.failed', status: 'warning', summary: `The model failed (${e instanceof ChatError ? e.kind : 'error'}): the planner's steps run instead`, detail: { message: (e as Error).message } });
  }
}

/** Runs one call of the model's; returns what the model reads back (a refusal starts with "error:"). */
async function runModelTool(d: AnswerDeps, w: Work, call: ToolCall): Promise<string> {
  let raw: unknown;
  try {
    raw = JSON.parse(call.function.arguments || '{}');
  } catch {
    return 'error: the arguments are not JSON';
  }
  const refuse = (message: string) => {
    w.run.event({ phase: 'act', action: `tool.${call.function.name}`, status: 'error', summary: message, step: w.budget.steps, tool: call.function.name });
    return `error: ${message}`;
  };
  const checked = checkToolCall(call.function.name, raw);
  if ('problem' in checked) return refuse(checked.problem);
  const tool = checked.call;
  const datasetId = tool.args.dataset_id;
  if (datasetId !== undefined && !w.scope.views.has(datasetId)) return refuse(`dataset ${datasetId} is not in scope`);
  // A filter on a field the dataset lacks, or a range on a non-numeric one, is dropped (traced), not refused.
  const filtersFor = (id: string, asked: AdvancedFilter[] = []) => {
    const kept = checkFilters(w.scope.views.get(id)!, asked);
    for (const f of kept.dropped) w.run.event({ phase: 'plan', action: 'plan.filter_dropped', status: 'warning', summary: f.reason, detail: { filter: f.item } });
    return kept.kept;
  };
  switch (tool.name) {
    case 'search': {
      const { query, filters } = tool.args;
      if (query.trim() === '') return refuse('search needs a query');
      const ids = datasetId ? [datasetId] : [...w.scope.views.keys()];
      const chunks = await searchStep(d, w, query, new Map(ids.map((id) => [id, filtersFor(id, filters)])), ids);
      return chunks.map((c) => `document_id=${String(c.metadata.document_id ?? '')} dataset_id=${c.dataset_id} ${String(c.metadata.name ?? c.chunk_id)}: ${clip(c.text, 600)}`).join('\n\n') || 'no passage found';
    }
    case 'read_document': {
      const chunks = await readDocumentStep(d, w, tool.args.dataset_id, tool.args.document_id);
      return clip(chunks.map((c) => c.text).join('\n'), Math.max(400, w.budget.left() * 4)) || 'the document has no readable chunk';
    }
    case 'compute': {
      const { dataset_id, op, field, group_by, filters } = tool.args;
      const spec: ComputeSpec = { op, ...(field !== undefined ? { field } : {}), ...(group_by !== undefined ? { group_by } : {}) };
      const problem = computeProblem(w.scope.views.get(dataset_id)!, spec);
      if (problem) return refuse(problem);
      return JSON.stringify(await computeStep(w, dataset_id, spec, filtersFor(dataset_id, filters)));
    }
  }
}
