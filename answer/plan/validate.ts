/**
 * A plan's filters and computations checked against a dataset's fields before anything runs:
 * a filter names a field that exists, a range needs a numeric field, an aggregate other than a
 * count needs a numeric field, a group needs a field. What fails is dropped with its reason (for
 * the trace), never sent to the engine to fail there.
 */
import { FILTER_OPS, RANGE_OPS, type AdvancedFilter } from '../../engine/index.js';
import type { DatasetView } from './dataset-view.js';

export const COMPUTE_OPS = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type ComputeOp = (typeof COMPUTE_OPS)[number];

export interface ComputeSpec {
  op: ComputeOp;
  field?: string;
  group_by?: string;
}

const RANGE = new Set<string>(RANGE_OPS);
const OPS = new Set<string>(FILTER_OPS);

export interface Checked<T> {
  kept: T[];
  dropped: { item: T; reason: string }[];
}

export function checkFilters(view: DatasetView, filters: AdvancedFilter[]): Checked<AdvancedFilter> {
  const out: Checked<AdvancedFilter> = { kept: [], dropped: [] };
  for (const f of filters) {
    const reason = filterProblem(view, f);
    if (reason) out.dropped.push({ item: f, reason });
    else out.kept.push(f);
  }
  return out;
}

function filterProblem(view: DatasetView, f: AdvancedFilter): string | null {
  if (!f || typeof f.field !== 'string') return 'a filter needs a field';
  const field = view.fields.get(f.field);
  if (!field) return `dataset ${view.record.name} has no field '${f.field}'`;
  if (!OPS.has(f.op)) return `unknown operator '${String(f.op)}'`;
  if (RANGE.has(f.op)) {
    if (!field.numeric) {
      return field.dateLike
        ? `'${f.field}' stores dates as ${field.type} values: it cannot be range-filtered`
        : `a range filter needs a numeric field; '${f.field}' holds ${field.type} values`;
    }
    if (typeof f.value !== 'number' || !Number.isFinite(f.value)) return `range filter on '${f.field}' needs a number`;
  }
  if (f.op === 'in' && !Array.isArray(f.values)) return `'in' on '${f.field}' needs values`;
  return null;
}

export function computeProblem(view: DatasetView, c: ComputeSpec): string | null {
  if (!(COMPUTE_OPS as readonly string[]).includes(c.op)) return `unknown aggregate '${String(c.op)}' (${COMPUTE_OPS.join(', ')})`;
  if (c.op !== 'count') {
    if (!c.field) return `${c.op} needs a field`;
    const f = view.fields.get(c.field);
    if (!f) return `dataset ${view.record.name} has no field '${c.field}'`;
    if (!f.numeric) return `${c.op} needs a numeric field; '${c.field}' holds ${f.type} values`;
  }
  if (c.group_by !== undefined && !view.fields.has(c.group_by)) return `dataset ${view.record.name} has no field '${c.group_by}' to group by`;
  return null;
}
