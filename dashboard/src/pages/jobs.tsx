/**
 * Ingestion and load jobs, newest first: status, progress and current step, what each read
 * (source) and wrote (dataset, documents, vectors), how long it took; read again every 2 s while
 * one is pending or running. The service filters jobs by dataset (not by source or status).
 */
import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { DatasetSelect, nameOf, useDatasets, useSources } from '../components/ingest-pickers.js';
import { IngestionTabs } from '../components/ingestion-tabs.js';
import { JobProgress } from '../components/job-status.js';
import { Listing } from '../components/listing.js';
import { OffsetPager } from '../components/offset-pager.js';
import { PageHead } from '../components/page-head.js';
import { count, when } from '../format.js';
import { useInterval, useLoad } from '../hooks.js';
import { ingestionOf, isActiveJob } from '../ingestion.js';
import { href } from '../router.js';
import type { PageProps } from './index.js';

const PAGE_SIZE = 50;
const POLL_MS = 2000;

export function JobsPage({ api, session }: PageProps) {
  const ing = ingestionOf(api, session.apiKey);
  const [datasetId, setDatasetId] = useState('');
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => ing.listJobs(PAGE_SIZE, offset, datasetId), [ing, offset, datasetId]);
  const datasets = useDatasets(api);
  const sources = useSources(ing);
  const running = list.data?.jobs.some(isActiveJob) ?? false;
  useInterval(list.reload, running ? POLL_MS : null);

  return (
    <>
      <PageHead title="Jobs">
        <p class="small muted" aria-live="polite">
          {running ? `Jobs are running: read again every ${POLL_MS / 1000} s.` : ''}
        </p>
      </PageHead>
      <IngestionTabs current="Jobs" />
      <div class="field narrow">
        <DatasetSelect id="jobs-dataset" label="Dataset" value={datasetId} items={datasets.data} onChange={(id) => (setOffset(0), setDatasetId(id))} none="every dataset" noneSelectable />
      </div>
      <Listing
        list={list}
        loading="Loading jobs…"
        isEmpty={(d) => d.total === 0}
        empty={<p>No jobs yet. A job starts when files are uploaded to a source, when a source is run, or when a schedule fires.</p>}
      >
        {(data) => (
          <>
            <DataTable label="Jobs" class="jobs" columns={['Started', 'Status', 'Source', 'Dataset', 'Documents', 'Vectors', 'Time', 'Message']}>
              {data.jobs.map((j) => (
                <tr key={j.job_id}>
                  <th scope="row">
                    <a href={href('ingestion', 'jobs', j.job_id)} aria-label={`Job ${j.job_id.slice(0, 8)}, ${j.status}`}>
                      {when(j.created_at)}
                    </a>
                    {j.retry_of && <span class="tag">retry</span>}
                  </th>
                  <td>
                    <JobProgress job={j} label={`Progress of job ${j.job_id.slice(0, 8)}`} />
                  </td>
                  <td>{j.source_id ? <a href={href('ingestion', 'sources', j.source_id)}>{nameOf(sources.data, j.source_id)}</a> : <span class="muted">upload</span>}</td>
                  <td>
                    <a href={href('datasets', j.dataset_id)}>{nameOf(datasets.data, j.dataset_id)}</a>
                  </td>
                  <td class="num">{count(j.documents_processed)}</td>
                  <td class="num">{count(j.vectors_inserted)}</td>
                  <td class="num">{j.processing_time_seconds.toFixed(1)} s</td>
                  <td class="wrap">
                    {j.message}
                    {j.error_details && <span class="problem-inline">{j.error_details.message}</span>}
                  </td>
                </tr>
              ))}
            </DataTable>
            <OffsetPager what="jobs" offset={offset} size={PAGE_SIZE} total={data.total} onOffset={setOffset} />
          </>
        )}
      </Listing>
    </>
  );
}
