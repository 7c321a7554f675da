/**
 * The search playground: a text or vector query on one dataset, filters on its typed fields,
 * hybrid and rerank switches and top_k; the hits with their scores, parts, metadata and text, and
 * the engine's receipt. The request sent is shown beside the answer, as the API takes it.
 */
import { useState } from 'preact/hooks';
import type { Dataset, SearchAnswer, SearchRequest } from '../../../client/index.js';
import { problemOf, type Problem } from '../api.js';
import { advancedFilters, FilterBuilder, type FilterRow } from '../components/filter-builder.js';
import { ProblemNote } from '../components/problem-note.js';
import { SearchHit } from '../components/search-hit.js';
import { SearchReceipt } from '../components/search-receipt.js';
import { useLoad } from '../hooks.js';
import { go, href } from '../router.js';
import type { PageProps } from './index.js';

/** The picker lists this many datasets (the most a page of the list holds); a dataset past them opens from its own page. */
const PICKER_SIZE = 200;

export function SearchPage({ params, api }: PageProps) {
  const id = params.id ?? '';
  const list = useLoad(() => api.listDatasets(PICKER_SIZE, 0), [api]);
  const dataset = useLoad(() => (id ? api.getDataset(id) : Promise.resolve(null)), [api, id]);

  return (
    <>
      <h1 tabIndex={-1}>Search</h1>
      <div class="field narrow">
        <label for="search-dataset">Dataset</label>
        <select id="search-dataset" value={id} onChange={(e) => go('search', e.currentTarget.value)}>
          <option value="" disabled>
            {list.data?.datasets.length === 0 ? 'no datasets yet' : 'choose a dataset'}
          </option>
          {list.data?.datasets.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
          {dataset.data && !list.data?.datasets.some((d) => d.id === id) && <option value={id}>{dataset.data.name}</option>}
        </select>
      </div>
      <ProblemNote problem={list.problem ?? dataset.problem} />
      {dataset.data && <Playground key={dataset.data.id} dataset={dataset.data} api={api} />}
    </>
  );
}

function Playground({ dataset, api }: { dataset: Dataset; api: PageProps['api'] }) {
  const fields = (dataset.schema ?? []).map((f) => ({ name: f.name, type: f.type }));
  const [mode, setMode] = useState<'text' | 'vector'>('text');
  const [text, setText] = useState('');
  const [vector, setVector] = useState('');
  const [topK, setTopK] = useState('10');
  const [hybrid, setHybrid] = useState(dataset.hybrid);
  const [rerank, setRerank] = useState(false);
  const [filters, setFilters] = useState<FilterRow[]>([]);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [sent, setSent] = useState<SearchRequest | null>(null);
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setProblem(null);
    let body: SearchRequest;
    try {
      const advanced = advancedFilters(filters, fields);
      body = {
        ...(mode === 'text' ? { query_text: text } : { query: vectorOf(vector) }),
        top_k: Number(topK),
        ...(hybrid ? { hybrid: true } : {}),
        ...(rerank ? { rerank: true } : {}),
        ...(advanced.length ? { advanced_filters: advanced } : {}),
        include_documents: true,
      };
    } catch (err) {
      return setProblem(problemOf(err));
    }
    setBusy(true);
    try {
      setAnswer(await api.search(dataset.id, body));
      setSent(body);
    } catch (err) {
      setProblem(problemOf(err));
      setAnswer(null);
    }
    setBusy(false);
  };

  return (
    <>
      <p class="muted small">
        <a href={href('datasets', dataset.id)}>{dataset.name}</a>: {dataset.dim} dimensions, {dataset.metric}, embedded by {dataset.embedding.provider}/
        {dataset.embedding.model}
      </p>
      <form class="card form" onSubmit={submit} aria-label="Search query">
        <fieldset class="switch">
          <legend>Query by</legend>
          <input type="radio" id="mode-text" name="mode" checked={mode === 'text'} onChange={() => setMode('text')} />
          <label for="mode-text">Text</label>
          <input type="radio" id="mode-vector" name="mode" checked={mode === 'vector'} onChange={() => setMode('vector')} />
          <label for="mode-vector">Vector</label>
        </fieldset>
        {mode === 'text' ? (
          <div class="field">
            <label for="query-text">Query text</label>
            <input id="query-text" type="search" required value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </div>
        ) : (
          <div class="field">
            <label for="query-vector">Query vector (a JSON array of {dataset.dim} numbers)</label>
            <textarea id="query-vector" rows={3} required value={vector} placeholder="[0.1, 0.2, …]" onInput={(e) => setVector(e.currentTarget.value)} />
          </div>
        )}
        <fieldset>
          <legend>Filters</legend>
          <FilterBuilder fields={fields} rows={filters} onChange={setFilters} />
        </fieldset>
        <div class="options">
          <div class="field">
            <label for="top-k">Results (top_k)</label>
            <input id="top-k" type="number" min={1} max={10000} required value={topK} onInput={(e) => setTopK(e.currentTarget.value)} />
          </div>
          <div class="check">
            <input id="hybrid" type="checkbox" checked={hybrid} onChange={(e) => setHybrid(e.currentTarget.checked)} />
            <label for="hybrid">Hybrid (vector and keywords)</label>
          </div>
          <div class="check">
            <input id="rerank" type="checkbox" checked={rerank} onChange={(e) => setRerank(e.currentTarget.checked)} />
            <label for="rerank">Rerank</label>
          </div>
        </div>
        <ProblemNote problem={problem} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </form>
      {answer && (
        <section aria-labelledby="results-title" aria-live="polite">
          <h2 id="results-title">
            {answer.results.length} {answer.results.length === 1 ? 'result' : 'results'}
          </h2>
          <p class="muted small">Scores ascend: the lower, the nearer ({sent?.hybrid ? '1 - the fused vector and keyword score' : scoreMeaning(dataset.metric)}).</p>
          <SearchReceipt answer={answer} />
          <ol class="hits">
            {answer.results.map((hit, i) => (
              <SearchHit key={hit.id} hit={hit} rank={i + 1} />
            ))}
          </ol>
          <details>
            <summary>Request sent</summary>
            <pre>{JSON.stringify(sent, null, 2)}</pre>
          </details>
        </section>
      )}
    </>
  );
}

function scoreMeaning(metric: string): string {
  return metric === 'cosine' ? '1 - cosine similarity' : metric === 'l2' ? 'squared distance' : metric === 'ip' ? 'negated dot product' : metric;
}

/** The vector field's array; its length is the service's to check, in its words. */
function vectorOf(text: string): number[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('The query vector is not valid JSON: write an array such as [0.1, 0.2]');
  }
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'number' && Number.isFinite(v))) throw new Error('The query vector must be an array of numbers');
  return value;
}
