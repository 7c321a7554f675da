/**
 * One job: its status, progress and current step, what it read and wrote, its error with the
 * files that failed, its statistics (once a file has finished) and its files; read again every
 * 2 s while it is pending or running. Retry reruns a failed or cancelled job (or one whose every
 * file failed) as a fresh job over the same files, and opens it.
 */
import { useState } from 'preact/hooks';
import { problemOf, type Problem } from '../api.js';
import { nameOf, useDatasets, useSources } from '../components/ingest-pickers.js';
import { IngestionTabs } from '../components/ingestion-tabs.js';
import { JobFiles } from '../components/job-files.js';
import { JobProgress } from '../components/job-status.js';
import { PageLoading } from '../components/listing.js';
import { PageHead } from '../components/page-head.js';
import { ProblemNote } from '../components/problem-note.js';
import { bytes, count, when } from '../format.js';
import { useInterval, useLoad } from '../hooks.js';
import { ingestionOf, isActiveJob, type JobStatistics } from '../ingestion.js';
import { go, href } from '../router.js';
import type { PageProps } from './index.js';

const POLL_MS = 2000;

export function JobPage({ params, api, session }: PageProps) {
  const id = params.id!;
  const ing = ingestionOf(api, session.apiKey);
  const info = useLoad(() => Promise.all([ing.getJob(id), ing.statistics(id)]), [ing, id]);
  const datasets = useDatasets(api);
  const sources = useSources(ing);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [job, stats] = info.data ?? [null, null];
  const poll = job && isActiveJob(job) ? POLL_MS : null;
  useInterval(info.reload, poll);

  if (!job) {
    return (
      <PageLoading title="Job" read={info}>
        <IngestionTabs current="Jobs" />
      </PageLoading>
    );
  }

  const retry = async () => {
    setBusy(true);
    setProblem(null);
    try {
      go('ingestion', 'jobs', (await ing.retry(job.job_id)).job_id);
    } catch (e) {
      setProblem(problemOf(e));
      setBusy(false);
    }
  };
  const retryable = job.status === 'failed' || job.status === 'cancelled' || (stats !== null && stats.files_failed > 0 && stats.files_processed === 0 && !isActiveJob(job));

  return (
    <>
      <PageHead title={`Job ${job.job_id.slice(0, 8)}`}>
        {retryable && (
          <button type="button" class="primary" onClick={retry} disabled={busy}>
            {busy ? 'Retrying…' : 'Retry job'}
          </button>
        )}
      </PageHead>
      <IngestionTabs current="Jobs" />
      <p class="muted small">
        <code>{job.job_id}</code>
        {job.retry_of && (
          <>
            {' · retries '}
            <a href={href('ingestion', 'jobs', job.retry_of)}>job {job.retry_of.slice(0, 8)}</a>
          </>
        )}
        {job.validate_only && ' · checks the files only'}
      </p>
      <ProblemNote problem={problem ?? info.problem} />
      <section class="card" aria-labelledby="job-title">
        <h2 id="job-title">Status</h2>
        <p class="job-now">
          <JobProgress job={job} label="Job progress" />
        </p>
        <p>{job.message}</p>
        <dl class="inline">
          <dt>Source</dt>
          <dd>{job.source_id ? <a href={href('ingestion', 'sources', job.source_id)}>{nameOf(sources.data, job.source_id)}</a> : '—'}</dd>
          <dt>Dataset</dt>
          <dd>
            <a href={href('datasets', job.dataset_id)}>{nameOf(datasets.data, job.dataset_id)}</a>
            {' · '}
            <a href={href('ingestion', 'documents', job.dataset_id)}>documents</a>
          </dd>
          <dt>Documents</dt>
          <dd>{count(job.documents_processed)}</dd>
          <dt>Vectors inserted</dt>
          <dd>{count(job.vectors_inserted)}</dd>
          <dt>Created</dt>
          <dd>{when(job.created_at)}</dd>
          <dt>Completed</dt>
          <dd>{when(job.completed_at)}</dd>
          <dt>Processing time</dt>
          <dd>{job.processing_time_seconds.toFixed(2)} s</dd>
        </dl>
        {job.error_details && (
          <div class="problem" role="alert">
            <p>
              <code>{job.error_details.type}</code> {job.error_details.message}
            </p>
            {job.error_details.files && job.error_details.files.length > 0 && (
              <ul>
                {job.error_details.files.map((f) => (
                  <li key={f.file_id}>
                    {f.file_name}: <code>{f.error_type}</code> {f.error_message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
      </section>
      <Statistics stats={stats} />
      <JobFiles ing={ing} jobId={job.job_id} stamp={`${job.status} ${job.progress_percentage} ${job.documents_processed} ${job.current_step}`} />
    </>
  );
}

function Statistics({ stats }: { stats: JobStatistics | null }) {
  return (
    <section class="card" aria-labelledby="stats-title">
      <h2 id="stats-title">Statistics</h2>
      {stats === null ? (
        <p class="muted">None until a file has finished.</p>
      ) : (
        <>
          <dl class="inline">
            <dt>Files discovered</dt>
            <dd>{count(stats.total_files_discovered)}</dd>
            <dt>Processed</dt>
            <dd>{count(stats.files_processed)}</dd>
            <dt>Skipped</dt>
            <dd>{count(stats.files_skipped)}</dd>
            <dt>Failed</dt>
            <dd>{count(stats.files_failed)}</dd>
            <dt>Bytes</dt>
            <dd>{bytes(stats.total_bytes_processed)}</dd>
            <dt>Chunks</dt>
            <dd>{count(stats.total_chunks_created)}</dd>
            <dt>Embeddings</dt>
            <dd>{count(stats.total_embeddings_generated)}</dd>
            <dt>Vectors</dt>
            <dd>{count(stats.total_vectors_inserted)}</dd>
            <dt>Per file</dt>
            <dd>{count(stats.avg_processing_time_ms)} ms on average</dd>
            <dt>All files</dt>
            <dd>{count(stats.total_processing_time_ms)} ms</dd>
          </dl>
          <Breakdown title="File types" counts={stats.file_type_breakdown} />
          <Breakdown title="Errors" counts={stats.error_breakdown} />
        </>
      )}
    </section>
  );
}

function Breakdown({ title, counts }: { title: string; counts: Record<string, number> }) {
  const entries = Object.entries(counts);
  if (entries.length === 0) return null;
  return (
    <p class="breakdown">
      <strong>{title}:</strong>{' '}
      {entries.map(([k, n], i) => (
        <span key={k}>
          {i > 0 && ', '}
          <code>{k}</code> {count(n)}
        </span>
      ))}
    </p>
  );
}
