/**
 * Rows by filter rather than by similarity: the ids of every live row the filters admit (what an
 * aggregate or a whole-document read needs), and the values a string column holds (what a
 * planner matches a question's words against). Filters mean what they mean in a search.
 */
import { compileFilters } from '../filters.js';
import { native, type NativeQueryOptions } from '../native.js';
import type { AdvancedFilter, Scalar } from '../types.js';
import type { DatasetCore } from './core.js';

export interface Matching {
  ids: Float64Array;
  /** More rows matched than `limit`: `ids` holds the first `limit` found. */
  truncated: boolean;
}

export function matching(core: DatasetCore, filters: Record<string, Scalar> | undefined, advanced: AdvancedFilter[] | undefined, limit: number): Matching {
  core.checkOpen();
  const predicates = compileFilters(core.ctx, filters, advanced);
  const seen = new Set<number>();
  const out: number[] = [];
  // A row being compacted lives in its old partition and the target until the swap: once is enough.
  for (const p of core.partitions) {
    const live = native.segmentLiveIds(p.handle);
    const mask = predicates.length ? native.segmentMatch(p.handle, live, { predicates }) : null;
    for (let i = 0; i < live.length; i++) {
      if (mask && !mask[i]) continue;
      const id = live[i];
      if (seen.has(id)) continue;
      if (out.length === limit) return { ids: Float64Array.from(out), truncated: true };
      seen.add(id);
      out.push(id);
    }
  }
  return { ids: Float64Array.from(out), truncated: false };
}

/** 1 for each id that is live and passes the predicates. */
export function matchIds(core: DatasetCore, ids: Float64Array, predicates: NativeQueryOptions['predicates']): Uint8Array {
  const out = new Uint8Array(ids.length);
  for (const p of core.partitions) {
    const m = native.segmentMatch(p.handle, ids, { predicates });
    for (let i = 0; i < m.length; i++) out[i] |= m[i];
  }
  return out;
}

/** Which of `ids` are live rows the filters admit (1) or not (0). */
export function admits(core: DatasetCore, ids: Float64Array, filters: Record<string, Scalar> | undefined, advanced: AdvancedFilter[] | undefined): Uint8Array {
  core.checkOpen();
  return matchIds(core, ids, compileFilters(core.ctx, filters, advanced));
}

/** The values of a string column, or null when it is not one or holds more than `limit`. */
export function columnValues(core: DatasetCore, field: string, limit: number): string[] | null {
  if (core.ctx.types[field] !== 'string') return null;
  const dict = core.ctx.dictionaries.get(field);
  if (!dict) return [];
  return dict.size > limit ? null : dict.values();
}
