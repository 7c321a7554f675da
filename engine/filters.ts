/**
 * Search filters to native predicates. `filters` is equality with both sides compared as
 * strings; `advancedFilters` compare typed on numeric columns. All conditions are ANDed.
 */
import { invalid } from '../errors/codes.js';
import type { ColumnContext } from './columns.js';
import type { NativePredicate } from './native.js';
import type { AdvancedFilter, Scalar } from './types.js';

const NUMERIC = new Set(['u32', 'i32', 'i64', 'f32', 'f64']);
const NEVER: NativePredicate = { column: '', op: 'in', values: [] };

function numericLooking(v: Scalar): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  if (typeof v === 'boolean') return undefined;
  return undefined;
}

/** The column code of `v` for an equality test, or undefined when no row can hold it. */
function equalityOperand(ctx: ColumnContext, field: string, v: Scalar): number | undefined {
  const type = ctx.types[field];
  if (!type) return undefined;
  if (type === 'string') return ctx.dictionaries.get(field)?.get(String(v));
  if (type === 'bool') {
    const s = String(v);
    return s === 'true' ? 1 : s === 'false' ? 0 : undefined;
  }
  return numericLooking(v);
}

function checkScalar(field: string, v: unknown): Scalar {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  throw invalid(`filter on '${field}' takes a string, number, boolean or null`);
}

export function compileFilters(
  ctx: ColumnContext,
  filters: Record<string, Scalar> | undefined,
  advanced: AdvancedFilter[] | undefined,
): NativePredicate[] {
  const out: NativePredicate[] = [];
  for (const [field, raw] of Object.entries(filters ?? {})) {
    const v = checkScalar(field, raw);
    if (v === null) {
      out.push({ column: field, op: 'is_null', values: [] });
      continue;
    }
    const code = equalityOperand(ctx, field, v);
    out.push(code === undefined ? NEVER : { column: field, op: 'eq', values: [code] });
  }
  for (const f of advanced ?? []) {
    if (!f || typeof f.field !== 'string' || f.field === '') throw invalid('every advanced filter needs a field');
    const type = ctx.types[f.field];
    if (f.op === 'in') {
      if (!Array.isArray(f.values)) throw invalid(`filter 'in' on '${f.field}' needs values (an array)`);
      const codes = f.values
        .map((v) => equalityOperand(ctx, f.field, checkScalar(f.field, v)))
        .filter((c): c is number => c !== undefined);
      out.push({ column: f.field, op: 'in', values: codes });
      continue;
    }
    if (!['eq', 'gt', 'gte', 'lt', 'lte'].includes(f.op)) {
      throw invalid(`unknown filter operator '${String(f.op)}' (expected eq, gt, gte, lt, lte or in)`);
    }
    const v = checkScalar(f.field, f.value);
    if (f.op === 'eq') {
      if (v === null) out.push({ column: f.field, op: 'is_null', values: [] });
      else {
        const code = equalityOperand(ctx, f.field, v);
        out.push(code === undefined ? NEVER : { column: f.field, op: 'eq', values: [code] });
      }
      continue;
    }
    if (type && !NUMERIC.has(type)) {
      throw invalid(`range filter '${f.op}' needs a numeric field; '${f.field}' holds ${type} values`);
    }
    const n = numericLooking(v);
    if (n === undefined) throw invalid(`range filter '${f.op}' on '${f.field}' needs a numeric value`);
    out.push(type ? { column: f.field, op: f.op, values: [n] } : NEVER);
  }
  return out;
}
