/**
 * The compute tool: count, sum, avg, min, max, optionally grouped, over the metadata of every row
 * the filters admit (the caller's and the plan's). Rows are read up to a bound; past it the
 * result says it covers a part.
 */
import type { AdvancedFilter } from '../../engine/index.js';
import type { ComputeSpec } from '../plan/validate.js';
import { withCallerFilters, type ToolContext } from './context.js';

export const MAX_COMPUTE_ROWS = 200_000;
const MAX_GROUPS = 50;

export interface ComputeResult {
  dataset_id: string;
  op: ComputeSpec['op'];
  field: string | null;
  group_by: string | null;
  /** Rows the filters admitted (read), and whether more exist. */
  rows: number;
  truncated: boolean;
  value: number | null;
  groups: { key: string; value: number | null; rows: number }[] | null;
}

export async function computeTool(ctx: ToolContext, datasetId: string, spec: ComputeSpec, planned: AdvancedFilter[]): Promise<ComputeResult> {
  const view = ctx.views.get(datasetId)!;
  const { filters, advanced_filters } = withCallerFilters(ctx.caller, planned);
  const { ids, truncated } = await view.rows.matching(filters, advanced_filters, MAX_COMPUTE_ROWS);
  const groups = new Map<string, Aggregate>();
  const total = new Aggregate();
  const rows = spec.field !== undefined || spec.group_by !== undefined ? await view.rows.metadata(ids) : null;
  for (let k = 0; k < ids.length; k++) {
    const m = rows?.[k] ?? {};
    const v = spec.field !== undefined ? m[spec.field] : undefined;
    const x = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined;
    total.add(x);
    if (spec.group_by !== undefined) {
      const key = m[spec.group_by] === undefined || m[spec.group_by] === null ? '(none)' : String(m[spec.group_by]);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = new Aggregate()));
      g.add(x);
    }
  }
  return {
    dataset_id: datasetId,
    op: spec.op,
    field: spec.field ?? null,
    group_by: spec.group_by ?? null,
    rows: ids.length,
    truncated,
    value: total.result(spec.op),
    groups:
      spec.group_by === undefined
        ? null
        : [...groups.entries()]
            .map(([key, g]) => ({ key, value: g.result(spec.op), rows: g.rows }))
            .sort((a, b) => (b.value ?? -Infinity) - (a.value ?? -Infinity) || a.key.localeCompare(b.key))
            .slice(0, MAX_GROUPS),
  };
}

class Aggregate {
  rows = 0;
  n = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  add(x: number | undefined): void {
    this.rows++;
    if (x === undefined) return;
    this.n++;
    this.sum += x;
    if (x < this.min) this.min = x;
    if (x > this.max) this.max = x;
  }

  result(op: ComputeSpec['op']): number | null {
    if (op === 'count') return this.rows;
    if (this.n === 0) return null;
    const v = op === 'sum' ? this.sum : op === 'avg' ? this.sum / this.n : op === 'min' ? this.min : this.max;
    return Math.round(v * 1e6) / 1e6;
  }
}
