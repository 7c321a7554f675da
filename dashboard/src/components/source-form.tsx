/**
 * The new-source form: a source type, then the fields of that type's config generated from the
 * schema GET /ingestion/source-types/{type} answers (its required fields, defaults, limits,
 * descriptions and secret fields), a name and a description. Validate asks the service to check
 * the config (and to contact the source); Create saves it. Only what is filled in is sent, so the
 * type's defaults apply to the rest; secrets are typed into password fields and never shown again.
 */
import { useState } from 'preact/hooks';
import { problemOf, type Problem } from '../api.js';
import { useLoad } from '../hooks.js';
import type { Ingestion, JsonSchema, Source, SourceTypeSchema, SourceValidation } from '../ingestion.js';
import { ProblemNote } from './problem-note.js';
import { SourceConfig } from './source-config.js';

interface Props {
  ing: Ingestion;
  onCreated: (s: Source) => void;
  onCancel: () => void;
}

/** Inputs' values by the field's path in the config (`selectors.title`). */
type Values = Record<string, string | boolean>;

export function SourceForm({ ing, onCreated, onCancel }: Props) {
  const types = useLoad(() => ing.sourceTypes(), [ing]);
  const [type, setType] = useState('');
  const schema = useLoad(() => (type ? ing.sourceType(type) : Promise.resolve(null)), [ing, type]);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [values, setValues] = useState<Values>({});
  const [busy, setBusy] = useState<'' | 'validate' | 'create'>('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [validation, setValidation] = useState<SourceValidation | null>(null);
  const ready = schema.data !== null && schema.data.type === type;

  const chooseType = (t: string) => {
    setType(t);
    setValues({});
    setValidation(null);
    setProblem(null);
  };
  const set = (path: string, v: string | boolean) => {
    setValues((prev) => ({ ...prev, [path]: v }));
    setValidation(null);
  };

  const run = async (what: 'validate' | 'create') => {
    setProblem(null);
    setValidation(null);
    let config: Record<string, unknown>;
    try {
      config = configOf(schema.data!.schema, values, '');
    } catch (err) {
      return setProblem(problemOf(err));
    }
    setBusy(what);
    try {
      if (what === 'validate') setValidation(await ing.validateSource(type, config));
      else return onCreated(await ing.createSource({ source_type: type, name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}), config }));
    } catch (err) {
      setProblem(problemOf(err));
    }
    setBusy('');
  };

  return (
    <form class="card form" onSubmit={(e) => (e.preventDefault(), run('create'))} aria-labelledby="source-create-title">
      <h2 id="source-create-title">New source</h2>
      <div class="grid">
        <div class="field">
          <label for="src-type">Source type</label>
          <select id="src-type" required value={type} onChange={(e) => chooseType(e.currentTarget.value)}>
            <option value="" disabled>
              {types.data ? 'choose a type' : 'loading…'}
            </option>
            {types.data?.source_types.map((t) => (
              <option key={t.type} value={t.type}>
                {t.name} ({t.type})
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="src-name">Name</label>
          <input id="src-name" required maxLength={256} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="src-description">Description</label>
          <input id="src-description" maxLength={4096} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
      </div>
      <ProblemNote problem={types.problem ?? schema.problem} />
      {ready && <ConfigFields key={type} t={schema.data!} values={values} set={set} />}
      {type && !ready && !schema.problem && <p class="muted">Reading the {type} config schema…</p>}
      <ProblemNote problem={problem} />
      {validation && <ValidationResult v={validation} />}
      <div class="actions">
        <button type="button" onClick={onCancel} disabled={busy !== ''}>
          Cancel
        </button>
        <button type="button" onClick={() => run('validate')} disabled={!ready || busy !== ''}>
          {busy === 'validate' ? 'Validating…' : 'Validate'}
        </button>
        <button type="submit" class="primary" disabled={!ready || busy !== ''}>
          {busy === 'create' ? 'Creating…' : 'Create source'}
        </button>
      </div>
    </form>
  );
}

function ConfigFields({ t, values, set }: { t: SourceTypeSchema; values: Values; set: (path: string, v: string | boolean) => void }) {
  const props = Object.entries(t.schema.properties ?? {});
  return (
    <fieldset>
      <legend>{t.name} settings</legend>
      {t.schema.description && <p class="small muted">The service asks: {t.schema.description}.</p>}
      {props.length === 0 ? (
        <p class="muted">This type has no settings.</p>
      ) : (
        <div class="grid config-grid">
          {props.map(([key, s]) => (
            <ConfigInput key={key} path={key} s={s} required={t.schema.required?.includes(key) ?? false} values={values} set={set} />
          ))}
        </div>
      )}
    </fieldset>
  );
}

interface InputProps {
  path: string;
  s: JsonSchema;
  required: boolean;
  values: Values;
  set: (path: string, v: string | boolean) => void;
}

/** One config field as an input of its kind: a select of its values, a checkbox, a number, lines of a list, JSON, text. */
function ConfigInput({ path, s, required, values, set }: InputProps) {
  const id = 'cfg-' + path.replace(/\W/g, '-');
  const hintId = `${id}-hint`;
  const secret = s['x-secret'] === true;
  const text = (values[path] as string | undefined) ?? '';
  const hint = hintOf(s, secret);
  const label = (
    <label for={id}>
      {path}
      {required && <span class="req"> (required)</span>}
    </label>
  );
  const hintLine = hint && (
    <span id={hintId} class="hint">
      {hint}
    </span>
  );
  const described = hint ? hintId : undefined;

  if (s.type === 'object' && s.properties) {
    return (
      <fieldset class="nested">
        <legend>{path}</legend>
        {Object.entries(s.properties).map(([k, sub]) => (
          <ConfigInput key={k} path={`${path}.${k}`} s={sub} required={s.required?.includes(k) ?? false} values={values} set={set} />
        ))}
      </fieldset>
    );
  }
  if (s.type === 'boolean') {
    const checked = (values[path] as boolean | undefined) ?? s.default === true;
    return (
      <div class="field">
        <div class="check">
          <input id={id} type="checkbox" checked={checked} aria-describedby={described} onChange={(e) => set(path, e.currentTarget.checked)} />
          {label}
        </div>
        {hintLine}
      </div>
    );
  }
  let input;
  if (s.enum) {
    input = (
      <select id={id} value={text} required={required && s.default === undefined} aria-describedby={described} onChange={(e) => set(path, e.currentTarget.value)}>
        <option value="">{s.default !== undefined ? `default (${String(s.default)})` : required ? 'choose one' : 'not set'}</option>
        {s.enum.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    );
  } else if (s.type === 'array' || s.type === 'object') {
    input = (
      <textarea
        id={id}
        rows={s.type === 'array' ? 2 : 3}
        class={secret ? 'secret-text' : undefined}
        required={required}
        spellcheck={false}
        autocomplete="off"
        value={text}
        placeholder={placeholderOf(s)}
        aria-describedby={described}
        onInput={(e) => set(path, e.currentTarget.value)}
      />
    );
  } else if (secret) {
    input = (
      <input id={id} type="password" autocomplete="new-password" required={required} value={text} aria-describedby={described} onInput={(e) => set(path, e.currentTarget.value)} />
    );
  } else if (s.type === 'integer' || s.type === 'number') {
    input = (
      <input id={id} type="number" required={required} min={s.minimum} max={s.maximum} step={s.type === 'integer' ? 1 : 'any'} value={text} placeholder={placeholderOf(s)} aria-describedby={described} onInput={(e) => set(path, e.currentTarget.value)} />
    );
  } else {
    input = (
      <input id={id} type="text" autocomplete="off" spellcheck={false} required={required} value={text} placeholder={placeholderOf(s)} aria-describedby={described} onInput={(e) => set(path, e.currentTarget.value)} />
    );
  }
  return (
    <div class="field">
      {label}
      {input}
      {hintLine}
    </div>
  );
}

function hintOf(s: JsonSchema, secret: boolean): string {
  const parts: string[] = [];
  if (s.description) parts.push(s.description);
  if (s.type === 'array') parts.push('one per line');
  if (s.type === 'object') parts.push('a JSON object');
  if (s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum}–${s.maximum}`);
  if (secret) parts.push('secret: stored encrypted, shown as ******** afterwards');
  return parts.join('; ');
}

function placeholderOf(s: JsonSchema): string | undefined {
  if (s.default === undefined) return s.format === 'uuid' ? 'a uuid' : undefined;
  if (Array.isArray(s.default)) return s.default.length ? s.default.join('\n') : undefined;
  if (typeof s.default === 'object') return Object.keys(s.default as object).length ? JSON.stringify(s.default) : undefined;
  return String(s.default);
}

/** The config to send: the fields filled in, typed as the schema says; a value that cannot be read throws, naming its field. */
function configOf(schema: JsonSchema, values: Values, prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(schema.properties ?? {})) {
    const path = prefix + key;
    if (s.type === 'object' && s.properties) {
      const sub = configOf(s, values, path + '.');
      if (Object.keys(sub).length) out[key] = sub;
      continue;
    }
    const v = values[path];
    if (s.type === 'boolean') {
      if (typeof v === 'boolean' && v !== (s.default === true)) out[key] = v;
      continue;
    }
    const raw = typeof v === 'string' ? v : '';
    if (raw.trim() === '') continue;
    if (s.type === 'integer' || s.type === 'number') {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new Error(`${path} must be a number`);
      out[key] = n;
    } else if (s.type === 'array') {
      const lines = raw.split('\n').map((l) => l.trim()).filter(Boolean);
      out[key] = s.items?.type === 'integer' || s.items?.type === 'number' ? lines.map(Number) : lines;
    } else if (s.type === 'object') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        // The message names the field only: the text may be a secret.
        throw new Error(`${path} is not valid JSON`);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${path} must be a JSON object`);
      out[key] = parsed;
    } else {
      out[key] = s['x-secret'] ? raw : raw.trim();
    }
  }
  return out;
}

function ValidationResult({ v }: { v: SourceValidation }) {
  return (
    <section class={v.success ? 'validation ok' : 'validation bad'} aria-labelledby="validation-title" role="status">
      <h3 id="validation-title">{v.success ? 'Valid' : 'Not valid'}</h3>
      <p>{v.message}</p>
      {v.warnings.length > 0 && (
        <ul>
          {v.warnings.map((w, i) => (
            <li key={i}>{w}</li>
          ))}
        </ul>
      )}
      {v.samples.length > 0 && (
        <>
          <h4>Samples the source answered</h4>
          <ul>
            {v.samples.map((s, i) => (
              <li key={i}>
                {s.title}
                {s.url && <span class="muted small"> {s.url}</span>}
              </li>
            ))}
          </ul>
        </>
      )}
      {v.normalized_config && (
        <details>
          <summary>The config with its defaults filled in</summary>
          <SourceConfig config={v.normalized_config} />
        </details>
      )}
    </section>
  );
}
