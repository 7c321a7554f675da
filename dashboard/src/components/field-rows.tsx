/** Rows of schema fields (name and type) to declare: at creation, and later by an admin. */
import type { SchemaField } from '../api.js';
import { FIELD_TYPES } from '../vocabulary.js';

interface Props {
  idPrefix: string;
  fields: SchemaField[];
  onChange: (fields: SchemaField[]) => void;
}

export function FieldRows({ idPrefix, fields, onChange }: Props) {
  const set = (i: number, patch: Partial<SchemaField>) => onChange(fields.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  return (
    <div class="rows">
      {fields.map((f, i) => (
        <div class="row" key={i}>
          <label for={`${idPrefix}-name-${i}`}>Field {i + 1} name</label>
          <input id={`${idPrefix}-name-${i}`} value={f.name} required pattern="[A-Za-z0-9_.\-]{1,128}" onInput={(e) => set(i, { name: e.currentTarget.value })} />
          <label for={`${idPrefix}-type-${i}`}>Field {i + 1} type</label>
          <select id={`${idPrefix}-type-${i}`} value={f.type} onChange={(e) => set(i, { type: e.currentTarget.value })}>
            {FIELD_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
          <button type="button" class="link" onClick={() => onChange(fields.filter((_, j) => j !== i))} aria-label={`Remove field ${i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...fields, { name: '', type: 'string' }])}>
        Add field
      </button>
    </div>
  );
}
