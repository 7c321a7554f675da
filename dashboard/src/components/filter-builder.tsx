/**
 * Filters built from the dataset's typed fields: a field, an operator its type takes, a value.
 * They go out as the search's `advanced_filters`.
 */
import type { SearchRequest } from '../../../client/index.js';
import { isIntegerType, isNumericType, OP_LABELS, opsFor, type FilterOp } from '../vocabulary.js';

export interface FilterRow {
  field: string;
  op: FilterOp;
  value: string;
}

export interface TypedField {
  name: string;
  type: string;
}

type AdvancedFilter = NonNullable<SearchRequest['advanced_filters']>[number];

interface Props {
  fields: TypedField[];
  rows: FilterRow[];
  onChange: (rows: FilterRow[]) => void;
}

export function FilterBuilder({ fields, rows, onChange }: Props) {
  if (fields.length === 0) return <p class="muted small">This dataset has no typed fields to filter on yet.</p>;
  const typeOf = (name: string) => fields.find((f) => f.name === name)?.type ?? 'string';
  const set = (i: number, patch: Partial<FilterRow>) =>
    onChange(
      rows.map((r, j) => {
        if (j !== i) return r;
        const next = { ...r, ...patch };
        // A new field may not take the operator the row had.
        return opsFor(typeOf(next.field)).includes(next.op) ? next : { ...next, op: 'eq' };
      }),
    );
  return (
    <div class="rows">
      {rows.map((r, i) => {
        const type = typeOf(r.field);
        return (
          <div class="row" key={i}>
            <label for={`filter-field-${i}`}>Filter {i + 1} field</label>
            <select id={`filter-field-${i}`} value={r.field} onChange={(e) => set(i, { field: e.currentTarget.value })}>
              {fields.map((f) => (
                <option key={f.name} value={f.name}>
                  {f.name} ({f.type})
                </option>
              ))}
            </select>
            <label for={`filter-op-${i}`}>Filter {i + 1} operator</label>
            <select id={`filter-op-${i}`} value={r.op} onChange={(e) => set(i, { op: e.currentTarget.value as FilterOp })}>
              {opsFor(type).map((op) => (
                <option key={op} value={op}>
                  {OP_LABELS[op]}
                </option>
              ))}
            </select>
            <label for={`filter-value-${i}`}>Filter {i + 1} value</label>
            <input
              id={`filter-value-${i}`}
              value={r.value}
              required
              inputMode={isNumericType(type) && r.op !== 'in' ? 'decimal' : undefined}
              placeholder={r.op === 'in' ? 'a, b, c' : type}
              onInput={(e) => set(i, { value: e.currentTarget.value })}
            />
            <button type="button" class="link" onClick={() => onChange(rows.filter((_, j) => j !== i))} aria-label={`Remove filter ${i + 1}`}>
              Remove
            </button>
          </div>
        );
      })}
      <button type="button" onClick={() => onChange([...rows, { field: fields[0]!.name, op: 'eq', value: '' }])}>
        Add filter
      </button>
    </div>
  );
}

/** The rows as the search takes them; throws, naming the row, when a value does not fit its field's type. */
export function advancedFilters(rows: FilterRow[], fields: TypedField[]): AdvancedFilter[] {
  return rows.map((r, i) => {
    const type = fields.find((f) => f.name === r.field)?.type ?? 'string';
    const one = (text: string) => scalar(text.trim(), type, i);
    return r.op === 'in' ? { field: r.field, op: r.op, values: r.value.split(',').map(one) } : { field: r.field, op: r.op, value: one(r.value) };
  });
}

function scalar(text: string, type: string, row: number): string | number {
  if (!isNumericType(type)) return text;
  const n = Number(text);
  if (text === '' || !Number.isFinite(n)) throw new Error(`Filter ${row + 1}: '${text}' is not a number`);
  if (isIntegerType(type) && !Number.isInteger(n)) throw new Error(`Filter ${row + 1}: ${type} takes whole numbers, not ${text}`);
  return n;
}
