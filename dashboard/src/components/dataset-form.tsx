/**
 * The create-dataset form: the fields of POST /datasets (catalog/datasets/requests.ts). Only what
 * is filled in is sent, so the service's defaults apply to the rest (the local embedding model,
 * its 384 dimensions, cosine); its refusals come back in its words.
 */
import { useState } from 'preact/hooks';
import type { CreateDataset, Dataset } from '../../../client/index.js';
import { problemOf, type Api, type Problem, type SchemaField } from '../api.js';
import { EMBEDDING_PROVIDERS, METRICS } from '../vocabulary.js';
import { FieldRows } from './field-rows.js';
import { ProblemNote } from './problem-note.js';

interface Props {
  api: Api;
  onCreated: (d: Dataset) => void;
  onCancel: () => void;
}

export function DatasetForm({ api, onCreated, onCancel }: Props) {
  const [name, setName] = useState('');
  const [provider, setProvider] = useState('');
  const [model, setModel] = useState('');
  const [secretRef, setSecretRef] = useState('');
  const [dim, setDim] = useState('');
  const [metric, setMetric] = useState('');
  const [hybrid, setHybrid] = useState(false);
  const [fields, setFields] = useState<SchemaField[]>([]);
  const [nlist, setNlist] = useState('');
  const [nprobeMin, setNprobeMin] = useState('');
  const [nprobeMax, setNprobeMax] = useState('');
  const [metadata, setMetadata] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setProblem(null);
    let body: CreateDataset;
    try {
      body = {
        name: name.trim(),
        ...(dim ? { dim: Number(dim) } : {}),
        ...(metric ? { metric: metric as CreateDataset['metric'] } : {}),
        ...(provider || model ? { embedding: { ...(provider ? { provider } : {}), ...(model ? { model } : {}), ...(secretRef ? { secret_ref: secretRef } : {}) } } : {}),
        ...(hybrid ? { hybrid } : {}),
        ...(fields.length ? { schema: fields } : {}),
        ...(nlist || nprobeMin || nprobeMax ? { tuning: numbers({ nlist, nprobe_min: nprobeMin, nprobe_max: nprobeMax }) } : {}),
        ...(metadata.trim() ? { metadata: jsonObject(metadata) } : {}),
      };
    } catch (err) {
      return setProblem(problemOf(err));
    }
    setBusy(true);
    try {
      onCreated(await api.createDataset(body));
    } catch (err) {
      setProblem(problemOf(err));
      setBusy(false);
    }
  };

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="create-title">
      <h2 id="create-title">New dataset</h2>
      <div class="grid">
        <div class="field">
          <label for="ds-name">Name</label>
          <input id="ds-name" required maxLength={256} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="ds-provider">Embedding provider</label>
          <select id="ds-provider" value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
            <option value="">default (local)</option>
            {EMBEDDING_PROVIDERS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="ds-model">Embedding model</label>
          <input id="ds-model" value={model} placeholder="the provider's default" onInput={(e) => setModel(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="ds-secret">Key secret ref</label>
          <input id="ds-secret" value={secretRef} placeholder="emb:openai:api_key" onInput={(e) => setSecretRef(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="ds-dim">Dimensions</label>
          <input id="ds-dim" type="number" min={1} max={65536} value={dim} placeholder="the model's" onInput={(e) => setDim(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="ds-metric">Metric</label>
          <select id="ds-metric" value={metric} onChange={(e) => setMetric(e.currentTarget.value)}>
            <option value="">default (cosine)</option>
            {METRICS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div class="check">
        <input id="ds-hybrid" type="checkbox" checked={hybrid} onChange={(e) => setHybrid(e.currentTarget.checked)} />
        <label for="ds-hybrid">Hybrid search (vectors and keywords)</label>
      </div>
      <fieldset>
        <legend>Typed metadata fields (for filters)</legend>
        <FieldRows idPrefix="ds-field" fields={fields} onChange={setFields} />
      </fieldset>
      <details>
        <summary>Tuning and metadata</summary>
        <div class="grid">
          <div class="field">
            <label for="ds-nlist">nlist</label>
            <input id="ds-nlist" type="number" min={1} value={nlist} placeholder="follows the data" onInput={(e) => setNlist(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="ds-nprobe-min">nprobe min</label>
            <input id="ds-nprobe-min" type="number" min={1} value={nprobeMin} onInput={(e) => setNprobeMin(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="ds-nprobe-max">nprobe max</label>
            <input id="ds-nprobe-max" type="number" min={1} value={nprobeMax} onInput={(e) => setNprobeMax(e.currentTarget.value)} />
          </div>
        </div>
        <div class="field">
          <label for="ds-metadata">Dataset metadata (a JSON object)</label>
          <textarea id="ds-metadata" rows={3} value={metadata} placeholder='{"team": "search"}' onInput={(e) => setMetadata(e.currentTarget.value)} />
        </div>
      </details>
      <ProblemNote problem={problem} />
      <div class="actions">
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create dataset'}
        </button>
      </div>
    </form>
  );
}

function numbers(values: Record<string, string>): Record<string, number> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== '').map(([k, v]) => [k, Number(v)]));
}

function jsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('Dataset metadata is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('Dataset metadata must be a JSON object');
  return value as Record<string, unknown>;
}
