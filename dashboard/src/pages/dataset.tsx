/**
 * One dataset: its settings, its schema (declared and inferred fields, with the inference's
 * confidence), storage and index from /stats and /index, hybrid search, and the SLA with its
 * tuner charted from this page's own readings (the service keeps no history of them).
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Dataset, Sla } from '../../../client/index.js';
import { problemOf, type Api, type Problem, type SchemaField } from '../api.js';
import { DataTable } from '../components/data-table.js';
import { DatasetStatus, indexWords } from '../components/dataset-status.js';
import { FieldRows } from '../components/field-rows.js';
import { PageLoading } from '../components/listing.js';
import { PageHead } from '../components/page-head.js';
import { ProblemNote } from '../components/problem-note.js';
import { TunerChart, type TunerSample } from '../components/tuner-chart.js';
import { bytes, count, micros, percent, when } from '../format.js';
import { useInterval, useLoad } from '../hooks.js';
import { href } from '../router.js';
import type { PageProps } from './index.js';

const POLL_MS = 2000;
/** Ten minutes of readings. */
const MAX_SAMPLES = 300;

async function details(api: Api, id: string) {
  const dataset = await api.getDataset(id);
  if (dataset.status !== 'ready') return { dataset, stats: null, index: null, hybrid: null };
  const [stats, index, hybrid] = await Promise.all([api.stats(id), api.index(id), api.hybrid(id)]);
  return { dataset, stats, index, hybrid };
}

export function DatasetPage({ params, api, session }: PageProps) {
  const id = params.id!;
  const info = useLoad(() => details(api, id), [api, id]);
  const d = info.data;
  const ready = d?.dataset.status === 'ready';
  useInterval(info.reload, d && (!ready || d.stats?.index_status === 'building') ? POLL_MS : null);

  const [sla, setSla] = useState<Sla | null>(null);
  const [samples, setSamples] = useState<TunerSample[]>([]);
  const [slaProblem, setSlaProblem] = useState<Problem | null>(null);
  const readSla = useCallback(() => {
    api.sla(id).then(
      (s) => {
        setSla(s);
        setSlaProblem(null);
        setSamples((prev) => [...prev, { at: Date.now(), nprobe: s.current_nprobe, p99Us: s.observed_p99_us }].slice(-MAX_SAMPLES));
      },
      (e) => setSlaProblem(problemOf(e)),
    );
  }, [api, id]);
  useEffect(() => {
    if (ready) readSla();
  }, [ready, readSla]);
  useInterval(readSla, ready ? POLL_MS : null);

  if (!d) return <PageLoading title="Dataset" read={info} />;
  const { dataset, stats, index, hybrid } = d;
  return (
    <>
      <PageHead title={dataset.name}>
        <a class="button" href={href('search', dataset.id)}>
          Search this dataset
        </a>
      </PageHead>
      <p class="muted small">
        <code>{dataset.id}</code> · <DatasetStatus status={dataset.status} stats={stats} index={index} />
      </p>
      <ProblemNote problem={info.problem} />
      <div class="cards">
        <section class="card" aria-labelledby="settings-title">
          <h2 id="settings-title">Settings</h2>
          <dl>
            <dt>Dimensions</dt>
            <dd>{dataset.dim}</dd>
            <dt>Metric</dt>
            <dd>{dataset.metric}</dd>
            <dt>Embedding</dt>
            <dd>
              {dataset.embedding.provider}/{dataset.embedding.model}
              {dataset.embedding.secret_ref && <span class="muted"> (key {dataset.embedding.secret_ref})</span>}
            </dd>
            <dt>Index type</dt>
            <dd>{dataset.index_type}</dd>
            <dt>Hybrid search</dt>
            <dd>{hybrid ? `${hybrid.enabled ? 'on' : 'off'}, alpha ${hybrid.alpha} (0 keyword, 1 vector)` : dataset.hybrid ? 'on' : 'off'}</dd>
            <dt>Lists (nlist)</dt>
            <dd>{dataset.tuning.nlist}</dd>
            <dt>nprobe bounds</dt>
            <dd>
              {dataset.tuning.nprobe_min}–{dataset.tuning.nprobe_max}
            </dd>
            <dt>Created</dt>
            <dd>{when(dataset.created_at)}</dd>
          </dl>
        </section>
        <section class="card" aria-labelledby="storage-title">
          <h2 id="storage-title">Storage and index</h2>
          {stats ? (
            <dl>
              <dt>Vectors</dt>
              <dd>{count(stats.vector_count)}</dd>
              <dt>Deleted, not yet compacted</dt>
              <dd>{count(stats.deleted_count)}</dd>
              <dt>Partitions</dt>
              <dd>{stats.partitions}</dd>
              <dt>Memory</dt>
              <dd>{bytes(stats.memory_bytes)}</dd>
              <dt>On disk</dt>
              <dd>{bytes(stats.storage_bytes)}</dd>
              <dt>Index</dt>
              <dd>{indexWords(stats, index)}</dd>
              <dt>Built</dt>
              <dd>{when(index?.built_at)}</dd>
            </dl>
          ) : (
            <p class="muted">The engine is being provisioned.</p>
          )}
        </section>
      </div>
      <SchemaSection dataset={dataset} api={api} canDeclare={session.role !== 'member'} onChanged={info.reload} />
      <section class="card" aria-labelledby="sla-title">
        <h2 id="sla-title">SLA and tuner</h2>
        <ProblemNote problem={slaProblem} />
        {sla ? (
          <>
            <dl class="inline">
              <dt>Target p99</dt>
              <dd>{sla.target_p99_us > 0 ? micros(sla.target_p99_us) : 'none set'}</dd>
              <dt>Observed p99</dt>
              <dd>{micros(sla.observed_p99_us)}</dd>
              <dt>nprobe now</dt>
              <dd>{sla.current_nprobe ?? '—'}</dd>
              <dt>Beam width now</dt>
              <dd>{sla.current_beam_width ?? '—'}</dd>
              <dt>nprobe from</dt>
              <dd>
                {sla.min_nprobe} to {sla.max_nprobe_fraction} % of the lists
              </dd>
              <dt>Beam width</dt>
              <dd>
                {sla.min_beam_width}–{sla.max_beam_width}
              </dd>
            </dl>
            <TunerChart samples={samples} targetUs={sla.target_p99_us} />
            <p class="muted small">
              The service keeps no history of the tuner: the chart shows what this page has read every {POLL_MS / 1000} s since it opened.
            </p>
          </>
        ) : (
          !slaProblem && <p class="muted">{ready ? 'Reading the SLA…' : 'Shown once the engine is ready.'}</p>
        )}
      </section>
    </>
  );
}

function SchemaSection({ dataset, api, canDeclare, onChanged }: { dataset: Dataset; api: Api; canDeclare: boolean; onChanged: () => void }) {
  const [fields, setFields] = useState<SchemaField[]>([]);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const schema = dataset.schema ?? [];

  const declare = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      await api.declareFields(dataset.id, fields);
      setFields([]);
      onChanged();
    } catch (err) {
      setProblem(problemOf(err));
    }
    setBusy(false);
  };

  return (
    <section class="card" aria-labelledby="schema-title">
      <h2 id="schema-title">Schema</h2>
      {schema.length === 0 ? (
        <p class="muted">No typed fields yet. Fields are declared, or inferred from inserted metadata once enough values agree on a type.</p>
      ) : (
        <DataTable label="Schema fields" columns={['Field', 'Type', 'Source', 'Confidence', 'Samples']}>
          {schema.map((f) => (
            <tr key={f.name}>
              <th scope="row">
                <code>{f.name}</code>
              </th>
              <td>{f.type}</td>
              <td>{f.source}</td>
              <td class="num">{f.source === 'inferred' ? percent(f.confidence) : '—'}</td>
              <td class="num">{f.samples === undefined ? '—' : count(f.samples)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {canDeclare && (
        <form class="declare" onSubmit={declare} aria-labelledby="declare-title">
          <h3 id="declare-title">Declare fields (admin)</h3>
          <FieldRows idPrefix="declare" fields={fields} onChange={setFields} />
          <ProblemNote problem={problem} />
          {fields.length > 0 && (
            <button type="submit" class="primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save fields'}
            </button>
          )}
        </form>
      )}
    </section>
  );
}
