/**
 * A dataset's rows as the answer tools read them besides search: its typed columns and their
 * small string values, the ids the filters admit, and rows' metadata. Embedded, `engineRows`
 * reads them from the engine dataset; in a cluster `cluster/router.ts` reads them from one
 * in-sync replica of each shard (the same port, answered over the shards).
 */
import type { AdvancedFilter, ColumnType, Dataset, Metadata } from '../engine/index.js';
import type { Scalar } from '../contract/json-schema.js';

export interface DatasetColumns {
  columnTypes: Record<string, ColumnType>;
  /** Per string column, its values when there are at most `maxValues` of them, else null. */
  values: Record<string, string[] | null>;
  vectorCount: number;
}

export interface DatasetRows {
  describe(maxValues: number): Promise<DatasetColumns>;
  /** Which of `ids` are live rows the filters admit (1) or not (0). */
  admits(ids: Float64Array, filters?: Record<string, Scalar>, advancedFilters?: AdvancedFilter[]): Promise<Uint8Array>;
  /** The ids of live rows the filters admit, at most `limit`, ascending. */
  matching(filters: Record<string, Scalar> | undefined, advancedFilters: AdvancedFilter[] | undefined, limit: number): Promise<{ ids: Float64Array; truncated: boolean }>;
  /** Each id's metadata (undefined for an id not live). */
  metadata(ids: Float64Array): Promise<(Metadata | undefined)[]>;
}

export function engineRows(ds: Dataset): DatasetRows {
  return {
    async describe(maxValues) {
      const columnTypes = ds.columnTypes;
      const values: Record<string, string[] | null> = {};
      for (const [name, type] of Object.entries(columnTypes)) if (type === 'string') values[name] = ds.columnValues(name, maxValues);
      return { columnTypes, values, vectorCount: ds.stats().vector_count };
    },
    async admits(ids, filters, advancedFilters) {
      return ds.admits(ids, filters, advancedFilters);
    },
    async matching(filters, advancedFilters, limit) {
      const m = ds.matching(filters, advancedFilters, limit);
      // The engine's answer is this call's own array: sorted in place.
      return { ids: m.ids.sort(), truncated: m.truncated };
    },
    async metadata(ids) {
      return Array.from(ids, (id) => ds.getMetadata(id));
    },
  };
}
