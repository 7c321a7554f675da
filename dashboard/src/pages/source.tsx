/**
 * One source: its type, config (secrets masked by the service) and what uses it (enabled
 * schedules, jobs in flight); Run reads it into a chosen dataset (a job), a file upload source
 * links to the upload page; its recent jobs (the service filters jobs by dataset only, so they are
 * picked from the newest 200); delete asks first.
 */
import { useState } from 'preact/hooks';
import { problemOf, type Problem } from '../api.js';
import { DatasetSelect, nameOf, useDatasets } from '../components/ingest-pickers.js';
import { IngestionTabs } from '../components/ingestion-tabs.js';
import { JobProgress } from '../components/job-status.js';
import { PageLoading } from '../components/listing.js';
import { PageHead } from '../components/page-head.js';
import { ProblemNote } from '../components/problem-note.js';
import { SourceConfig } from '../components/source-config.js';
import { when } from '../format.js';
import { useInterval, useLoad } from '../hooks.js';
import { ingestionOf, isActiveJob } from '../ingestion.js';
import { go, href } from '../router.js';
import type { PageProps } from './index.js';
import { DeleteSource, useSourceDelete } from './sources.js';

const POLL_MS = 2000;
const RECENT_JOBS = 200;

export function SourcePage({ params, api, session }: PageProps) {
  const id = params.id!;
  const ing = ingestionOf(api, session.apiKey);
  const source = useLoad(() => Promise.all([ing.getSource(id), ing.references(id)]), [ing, id]);
  const jobs = useLoad(async () => (await ing.listJobs(RECENT_JOBS, 0)).jobs.filter((j) => j.source_id === id).slice(0, 10), [ing, id]);
  const datasets = useDatasets(api);
  const [datasetId, setDatasetId] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const del = useSourceDelete(ing, () => go('ingestion'));
  const running = jobs.data?.some(isActiveJob) ?? false;
  useInterval(() => (jobs.reload(), source.reload()), running ? POLL_MS : null);

  const [s, refs] = source.data ?? [null, null];
  if (!s) {
    return (
      <PageLoading title="Source" read={source}>
        <IngestionTabs current="Sources" />
      </PageLoading>
    );
  }

  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      const job = await ing.startJob(s.id, datasetId);
      go('ingestion', 'jobs', job.job_id);
    } catch (err) {
      setProblem(problemOf(err));
      setBusy(false);
    }
  };
  const runWords =
    s.type === 'file_upload' ? 'Ingests the latest upload of each file name again.' : 'Lists the source now and ingests what it holds (incremental sources skip unchanged documents).';

  return (
    <>
      <PageHead title={s.name}>
        <div class="head-actions">
          {s.type === 'file_upload' && (
            <a class="button" href={href('ingestion', 'upload', s.id)}>
              Upload files
            </a>
          )}
          <button type="button" class="danger" onClick={() => del.ask(s)}>
            Delete source
          </button>
        </div>
      </PageHead>
      <IngestionTabs current="Sources" />
      <p class="muted small">
        <code>{s.id}</code> · {s.type} · created {when(s.created_at)} · changed {when(s.updated_at)}
      </p>
      {s.description && <p>{s.description}</p>}
      <ProblemNote problem={source.problem} />
      <div class="cards">
        <section class="card" aria-labelledby="config-title">
          <h2 id="config-title">Config</h2>
          <SourceConfig config={s.config} />
        </section>
        <section class="card" aria-labelledby="refs-title">
          <h2 id="refs-title">Used by</h2>
          {refs && (
            <>
              <p>
                {refs.schedule_count} enabled schedule{refs.schedule_count === 1 ? '' : 's'}, {refs.active_job_count} job{refs.active_job_count === 1 ? '' : 's'} in flight
              </p>
              {refs.schedules.length > 0 && (
                <ul>
                  {refs.schedules.map((x) => (
                    <li key={x.id}>
                      <a href={href('ingestion', 'schedules')}>{x.name}</a>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
          <form class="run" onSubmit={run} aria-labelledby="run-title">
            <h3 id="run-title">Run into a dataset</h3>
            <p class="small muted">{runWords}</p>
            <DatasetSelect id="run-dataset" label="Dataset" value={datasetId} items={datasets.data} onChange={setDatasetId} required />
            <ProblemNote problem={problem ?? datasets.problem} />
            <button type="submit" class="primary" disabled={busy || !datasetId}>
              {busy ? 'Starting…' : 'Run source'}
            </button>
          </form>
        </section>
      </div>
      <section class="card" aria-labelledby="source-jobs-title">
        <h2 id="source-jobs-title">Recent jobs</h2>
        <ProblemNote problem={jobs.problem} />
        {jobs.data?.length === 0 && <p class="muted">No job has read this source yet.</p>}
        {jobs.data && jobs.data.length > 0 && (
          <ul class="plain">
            {jobs.data.map((j) => (
              <li key={j.job_id}>
                <a href={href('ingestion', 'jobs', j.job_id)}>{when(j.created_at)}</a> into {nameOf(datasets.data, j.dataset_id)}{' '}
                <JobProgress job={j} label={`Progress of the job of ${when(j.created_at)}`} />
              </li>
            ))}
          </ul>
        )}
      </section>
      <DeleteSource del={del} />
    </>
  );
}
