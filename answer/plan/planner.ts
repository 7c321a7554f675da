/**
 * The planner without a model: reads the question against each dataset's fields and decides what
 * to retrieve, with which filters, and whether a tool beyond one search is needed (a whole
 * document, an aggregate). It writes filters only on fields that exist, ranges only on numeric
 * fields, and says so when a date it was asked to range over is stored as a string. The caller's
 * filters are not the planner's: they are added to every search by the tools, whatever the plan.
 */
import { tokenize, type AdvancedFilter } from '../../engine/index.js';
import type { Mode } from '../requests.js';
import type { DatasetView, FieldView } from './dataset-view.js';
import { checkFilters, computeProblem, type ComputeOp, type ComputeSpec } from './validate.js';

export type Intent = 'lookup' | 'read_document' | 'compute';

export interface DatasetPlan {
  dataset_id: string;
  /** Filters the question implies (the caller's are added at search time). */
  filters: AdvancedFilter[];
  /** The aggregate, when the question asks for one this dataset can answer. */
  compute: ComputeSpec | null;
}

export interface Plan {
  path: 'single_pass' | 'tool_loop';
  intent: Intent;
  /** What the search embeds and matches: the question, with the previous one for a follow-up. */
  search_query: string;
  datasets: DatasetPlan[];
  read_document: boolean;
  /** What the planner could not do, in words (for the trace). */
  notes: string[];
}

/** Provenance the ingestion writes on every chunk: never a filter a question implies. */
const PROVENANCE = new Set([
  'text', 'document_id', 'chunk_index', 'char_start', 'char_end', 'source_id', 'source_type', 'content_type', 'url', 'path',
  'heading', 'page', 'page_end', 'row_start', 'row_end', 'column_names', 'doc_value',
]);
const FOLLOW_UP = /\b(it|its|they|them|their|this|that|these|those|he|she|his|her|there|one)\b/i;
const READ_DOCUMENT = /\b(summari[sz]e|summary of|whole|entire|full text|read (?:the|this|that)|outline of)\b/i;
const AGGREGATES: [ComputeOp, RegExp][] = [
  ['avg', /\b(average|avg|mean)\b/i],
  ['sum', /\b(total|sum)\b/i],
  ['min', /\b(minimum|min|lowest|smallest|least|cheapest|earliest|oldest)\b/i],
  ['max', /\b(maximum|max|highest|largest|biggest|most expensive|latest|newest|greatest)\b/i],
  ['count', /\b(how many|count|number of)\b/i],
];
/** What a count counts when it counts records (not "how many steps does the keeper climb"). */
const RECORD_NOUNS = /\b(?:how many|count(?: the| of)?|number of)\s+(?:\w+\s+){0,2}?(records?|rows?|entries|entry|items?|documents?|files?|vectors?|chunks?|pages?)\b/i;
const COMPARISONS: [AdvancedFilter['op'], RegExp][] = [
  ['gte', /\b(?:at least|no less than|from)\s*\$?(-?\d+(?:\.\d+)?)/gi],
  ['gt', /(?:\b(?:over|above|more than|greater than|exceeding|higher than)\s*|>\s*)\$?(-?\d+(?:\.\d+)?)/gi],
  ['lte', /\b(?:at most|no more than|up to)\s*\$?(-?\d+(?:\.\d+)?)/gi],
  ['lt', /(?:\b(?:under|below|less than|fewer than|lower than)\s*|<\s*)\$?(-?\d+(?:\.\d+)?)/gi],
];
const YEARS: [AdvancedFilter['op'], RegExp][] = [
  ['eq', /\b(?:in|during)\s+((?:19|20)\d{2})\b/gi],
  ['gte', /\bsince\s+((?:19|20)\d{2})\b/gi],
  ['gt', /\bafter\s+((?:19|20)\d{2})\b/gi],
  ['lt', /\bbefore\s+((?:19|20)\d{2})\b/gi],
];

export interface PlanInput {
  question: string;
  history: { role: string; content: string }[];
  mode: Mode;
  datasets: DatasetView[];
}

export function plan(input: PlanInput): Plan {
  const { question, mode } = input;
  const notes: string[] = [];
  const wantsCompute = aggregateOf(question);
  const wantsDocument = READ_DOCUMENT.test(question);
  const datasets = input.datasets.map((view) => planDataset(view, question, wantsCompute, notes));
  const computes = datasets.some((d) => d.compute !== null);
  if (wantsCompute && wantsCompute.op !== 'count' && !computes) notes.push(`the question asks for a ${wantsCompute.op}, but no dataset in scope has a field it can be computed on: answered from the text`);
  const intent: Intent = computes ? 'compute' : wantsDocument ? 'read_document' : 'lookup';
  let path: Plan['path'] = mode === 'agentic' ? 'tool_loop' : mode === 'fast' ? 'single_pass' : intent === 'lookup' ? 'single_pass' : 'tool_loop';
  if (mode === 'fast' && intent !== 'lookup') notes.push(`fast mode makes one retrieval pass: it does not ${intent === 'compute' ? 'compute' : 'read whole documents'}`);
  if (path === 'single_pass') for (const d of datasets) d.compute = null;
  return { path, intent, search_query: searchQuery(question, input.history), datasets, read_document: path === 'tool_loop' && (wantsDocument || mode === 'agentic'), notes };
}

function planDataset(view: DatasetView, question: string, asked: { op: ComputeOp } | null, notes: string[]): DatasetPlan {
  let wanted = asked;
  const fields = [...view.fields.values()].filter((f) => !PROVENANCE.has(f.name));
  const proposed = [...equalityFilters(fields, question), ...comparisonFilters(fields, question), ...yearFilters(fields, question, notes, view.record.name)];
  const checked = checkFilters(view, proposed);
  for (const d of checked.dropped) notes.push(d.reason);
  let compute: ComputeSpec | null = null;
  if (wanted?.op === 'count' && !countsRecords(view, question, checked.kept.length > 0)) wanted = null;
  if (wanted) {
    const numeric = mentioned(fields.filter((f) => f.numeric), question);
    const spec: ComputeSpec = { op: wanted.op, ...(wanted.op !== 'count' && numeric ? { field: numeric.name } : {}) };
    const group = groupField(fields, question);
    if (group) spec.group_by = group.name;
    const problem = computeProblem(view, spec);
    if (problem === null) compute = spec;
    else if (wanted.op !== 'count') notes.push(`${view.record.name}: ${problem}`);
  }
  return { dataset_id: view.record.id, filters: checked.kept, compute };
}

/**
 * A count is over this dataset's records when the question filters them, names them (a record
 * noun, or the dataset's own name: "how many products"), or groups them by a field.
 */
function countsRecords(view: DatasetView, question: string, filtered: boolean): boolean {
  if (filtered || RECORD_NOUNS.test(question)) return true;
  const m = /\b(?:how many|number of|count(?: the| of)?)\s+((?:\w+\s+){0,2}\w+)/i.exec(question);
  if (!m) return false;
  const counted = new Set(tokenize(m[1]));
  const named = termsOf(view.record.name);
  return (named.length > 0 && named.every((t) => counted.has(t))) || /\b(per|by|for each|grouped by)\b/i.test(question);
}

function aggregateOf(question: string): { op: ComputeOp } | null {
  for (const [op, re] of AGGREGATES) if (re.test(question)) return { op };
  return null;
}

/** The words of a field's name, as terms (`unit_price` -> unit, price; `createdAt` -> creat, at). */
function termsOf(name: string): string[] {
  return tokenize(name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_.-]+/g, ' '));
}

/** The field the question names (all its name's terms appear), the longest name winning. */
function mentioned(fields: FieldView[], question: string): FieldView | undefined {
  const terms = new Set(tokenize(question));
  return fields
    .filter((f) => {
      const t = termsOf(f.name);
      return t.length > 0 && t.every((x) => terms.has(x));
    })
    .sort((a, b) => termsOf(b.name).length - termsOf(a.name).length)[0];
}

function groupField(fields: FieldView[], question: string): FieldView | undefined {
  const m = /\b(?:per|by|for each|each|grouped by|broken down by)\s+([A-Za-z_][\w .-]{0,40})/i.exec(question);
  return m ? mentioned(fields, m[1].split(/\s+/).slice(0, 3).join(' ')) : undefined;
}

/** A value of a small string column that the question says, as a phrase of its own. */
function equalityFilters(fields: FieldView[], question: string): AdvancedFilter[] {
  const out: AdvancedFilter[] = [];
  for (const f of fields) {
    if (!f.values || f.dateLike) continue;
    const hits = f.values.filter((v) => v.length >= 3 && v.length <= 60 && !/^\d+$/.test(v) && phrase(v).test(question));
    if (hits.length === 1) out.push({ field: f.name, op: 'eq', value: hits[0] });
    else if (hits.length > 1) out.push({ field: f.name, op: 'in', values: hits });
  }
  return out;
}

function phrase(value: string): RegExp {
  return new RegExp(`(^|[^\\p{L}\\p{N}])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}])`, 'iu');
}

/** "price over 20", "rating at least 4": a comparison right after a numeric field's name. */
function comparisonFilters(fields: FieldView[], question: string): AdvancedFilter[] {
  const out: AdvancedFilter[] = [];
  for (const [op, re] of COMPARISONS) {
    for (const m of question.matchAll(re)) {
      const before = question.slice(Math.max(0, m.index - 60), m.index).split(/\s+/).slice(-5).join(' ');
      const field = mentioned(fields.filter((f) => f.numeric), before);
      if (field) out.push({ field: field.name, op, value: Number(m[1]) });
    }
  }
  return out;
}

/**
 * "in 2021", "after 2019": on the date field the question names (else a numeric year field);
 * a date stored as a string cannot be range-filtered, and a numeric date that is not a year
 * (epoch seconds? milliseconds?) is not guessed at: both get a note instead of a filter.
 */
function yearFilters(fields: FieldView[], question: string, notes: string[], dataset: string): AdvancedFilter[] {
  const out: AdvancedFilter[] = [];
  for (const [op, re] of YEARS) {
    for (const m of question.matchAll(re)) {
      const year = Number(m[1]);
      const named = mentioned(fields.filter((f) => f.dateLike), question);
      const target = named ?? fields.find((f) => f.numeric && /year/i.test(f.name)) ?? fields.find((f) => f.dateLike && !f.numeric);
      if (!target) continue;
      if (target.numeric && /year/i.test(target.name)) out.push({ field: target.name, op, value: year });
      else if (!target.numeric) notes.push(`${dataset}: '${target.name}' stores dates as strings, so "${m[0]}" cannot be range-filtered; searched without that filter`);
      else notes.push(`${dataset}: '${target.name}' holds numbers that are not years, so "${m[0]}" was not turned into a filter`);
    }
  }
  return out;
}

/** A follow-up ("and its default?") searches with the question it follows. */
function searchQuery(question: string, history: { role: string; content: string }[]): string {
  const previous = [...history].reverse().find((h) => h.role === 'user')?.content;
  if (!previous) return question;
  const short = question.trim().split(/\s+/).length < 8;
  return short || FOLLOW_UP.test(question) ? `${previous.slice(0, 500)} ${question}` : question;
}
