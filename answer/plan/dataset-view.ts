/**
 * What a planner may know of a dataset: its filterable fields (the engine's typed columns, with
 * the schema's declared type), which hold numbers, which look like dates, and the values of
 * small string columns (so a word of the question can become an equality filter).
 */
import type { DatasetRecord } from '../../catalog/datasets/record.js';
import type { DatasetRows } from '../../retrieval/rows.js';

export interface FieldView {
  name: string;
  type: string;
  numeric: boolean;
  /** The name or the values say it holds dates or times. */
  dateLike: boolean;
  /** Values of a string column of at most MAX_VALUES distinct values. */
  values: string[] | null;
}

export interface DatasetView {
  record: DatasetRecord;
  /** Its rows beside search: the engine dataset's, or in a cluster its shards'. */
  rows: DatasetRows;
  fields: Map<string, FieldView>;
  vectorCount: number;
}

const NUMERIC = new Set(['u32', 'i32', 'i64', 'f32', 'f64']);
const MAX_VALUES = 200;
const DATE_NAME = /(^|[_.-])(date|time|timestamp|year|month|day|created|updated|modified|published)([_.-]|$)|_at$|_on$/i;
const DATE_VALUE = /^\d{4}-\d{2}(-\d{2})?([T ]\d{2}:\d{2}.*)?$/;

export async function viewOf(record: DatasetRecord, rows: DatasetRows): Promise<DatasetView> {
  const declared = new Map(record.schema.map((e) => [e.name, e.type as string]));
  const columns = await rows.describe(MAX_VALUES);
  const fields = new Map<string, FieldView>();
  for (const [name, columnType] of Object.entries(columns.columnTypes)) {
    const type = declared.get(name) ?? columnType;
    const values = columnType === 'string' ? (columns.values[name] ?? null) : null;
    const sample = values ?? [];
    const dateLike = DATE_NAME.test(name) || (sample.length > 0 && sample.slice(0, 20).every((v) => DATE_VALUE.test(v)));
    fields.set(name, { name, type, numeric: NUMERIC.has(columnType), dateLike, values });
  }
  return { record, rows, fields, vectorCount: columns.vectorCount };
}
