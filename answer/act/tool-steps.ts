/**
 * The tools as steps of a run, whoever chose them (the planner or the model): each is traced
 * (started, then what it found and how long it took), and what it reads is gathered into the
 * run's work, for the answer to be written from.
 */
import type { AdvancedFilter } from '../../engine/index.js';
import type { ComputeSpec } from '../plan/validate.js';
import { DEFAULT_ANSWER_TOP_K } from '../requests.js';
import { computeSentence } from '../synthesis/compute-sentence.js';
import { computeTool, type ComputeResult } from '../tools/compute.js';
import type { RetrievedChunk } from '../tools/context.js';
import { readDocumentTool } from '../tools/read-document.js';
import { searchTool } from '../tools/search.js';
import type { AnswerDeps, Work } from '../work.js';

/** A search; when the plan's filters match nothing, once more without them (the caller's stay). */
export async function searchStep(d: AnswerDeps, w: Work, query: string, filters: Map<string, AdvancedFilter[]>, datasetIds?: string[]): Promise<RetrievedChunk[]> {
  const { run, budget } = w;
  const step = budget.steps;
  const topK = w.body.top_k ?? DEFAULT_ANSWER_TOP_K;
  run.event({ phase: 'act', action: 'tool.search', status: 'started', summary: `Searching for "${clip(query, 80)}"`, step, tool: 'search', detail: { query } });
  const t0 = Date.now();
  let out = await searchTool(d.search, w.ctx, { query, top_k: topK, filters, dataset_ids: datasetIds });
  const plannedFilters = [...filters.values()].some((f) => f.length > 0);
  if (out.chunks.length === 0 && plannedFilters) {
    run.event({ phase: 'act', action: 'tool.search', status: 'warning', summary: "The question's filters matched nothing: searching without them (the caller's filters stay)", step, tool: 'search' });
    out = await searchTool(d.search, w.ctx, { query, top_k: topK, filters: new Map(), dataset_ids: datasetIds });
  }
  w.gathered.push(...out.chunks);
  const failed = out.perDataset.filter((r) => r.error);
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

export async function readDocumentStep(d: AnswerDeps, w: Work, datasetId: string, documentId: string): Promise<RetrievedChunk[]> {
  const { run, budget } = w;
  const step = budget.steps;
  run.event({ phase: 'act', action: 'tool.read_document', status: 'started', summary: 'Reading the whole document', step, tool: 'read_document', detail: { dataset_id: datasetId, document_id: documentId } });
  const t0 = Date.now();
  const read = await readDocumentTool(d.documents, w.ctx, datasetId, documentId);
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

/** An aggregate; its result is also streamed as a table artifact. */
export async function computeStep(w: Work, datasetId: string, spec: ComputeSpec, filters: AdvancedFilter[]): Promise<ComputeResult> {
  const { run, budget } = w;
  const step = budget.steps;
  const view = w.scope.views.get(datasetId)!;
  run.event({ phase: 'act', action: 'tool.compute', status: 'started', summary: `Computing ${spec.op}${spec.field ? ` of ${spec.field}` : ''} in ${view.record.name}`, step, tool: 'compute', detail: { dataset_id: datasetId, ...spec, filters } });
  const t0 = Date.now();
  const result = await computeTool(w.ctx, datasetId, spec, filters);
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

/** `s` cut to `n` characters, an ellipsis marking the cut. */
export function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}
