/**
 * The dataset and source pickers of the Ingestion pages, and the lists they offer: the first 200
 * of each (the most a page of the list holds), which also name the ids jobs and schedules carry.
 */
import type { Dataset } from '../../../client/index.js';
import type { Api } from '../api.js';
import { useLoad } from '../hooks.js';
import type { Ingestion, Source } from '../ingestion.js';

const PICKER_SIZE = 200;

export function useDatasets(api: Api) {
  return useLoad(async () => (await api.listDatasets(PICKER_SIZE, 0)).datasets, [api]);
}

export function useSources(ing: Ingestion) {
  return useLoad(async () => (await ing.listSources(PICKER_SIZE, 0)).sources, [ing]);
}

/** The name of the item with `id` in `list`, or the id's start when it is not among them. */
export function nameOf(list: { id: string; name: string }[] | null, id: string | null): string {
  if (!id) return '—';
  return list?.find((x) => x.id === id)?.name ?? id.slice(0, 8);
}

interface SelectProps<T> {
  id: string;
  label: string;
  value: string;
  items: T[] | null;
  onChange: (id: string) => void;
  /** The first option's words (its value is empty). */
  none: string;
  /** The empty option may be chosen (a filter), not only a prompt. */
  noneSelectable?: boolean;
  required?: boolean;
}

function Select<T extends { id: string; name: string }>({ id, label, value, items, onChange, none, noneSelectable, required }: SelectProps<T>) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} required={required} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="" disabled={!noneSelectable}>
          {items === null ? 'loading…' : items.length === 0 && !noneSelectable ? 'none yet' : none}
        </option>
        {items?.map((x) => (
          <option key={x.id} value={x.id}>
            {x.name}
          </option>
        ))}
      </select>
    </div>
  );
}

export function DatasetSelect(props: Omit<SelectProps<Dataset>, 'none'> & { none?: string }) {
  return <Select {...props} none={props.none ?? 'choose a dataset'} />;
}

export function SourceSelect(props: Omit<SelectProps<Source>, 'none'> & { none?: string }) {
  const items = props.items?.map((s) => ({ ...s, name: `${s.name} (${s.type})` })) ?? null;
  return <Select {...props} items={items} none={props.none ?? 'choose a source'} />;
}
