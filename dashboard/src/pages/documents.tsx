/**
 * A dataset's document catalog: each document's name and title, format, size, status (and why it
 * failed), chunks, tokens and pages, the source and job it came from; pages by the service's
 * cursor (it gives no totals), a status filter, and a download of the original where the service
 * kept it: fetched with the key in a header and saved through an object URL.
 */
import { useState } from 'preact/hooks';
import { problemOf, type Problem } from '../api.js';
import { DataTable } from '../components/data-table.js';
import { DatasetSelect, nameOf, useDatasets, useSources } from '../components/ingest-pickers.js';
import { IngestionTabs } from '../components/ingestion-tabs.js';
import { StatusTag } from '../components/job-status.js';
import { Listing } from '../components/listing.js';
import { Notice } from '../components/page-head.js';
import { ProblemNote } from '../components/problem-note.js';
import { bytes, count, when } from '../format.js';
import { useLoad } from '../hooks.js';
import { ingestionOf, type CatalogDocument, type Ingestion } from '../ingestion.js';
import { go, href } from '../router.js';
import type { PageProps } from './index.js';

const PAGE_SIZE = 50;
const STATUSES = ['processing', 'ready', 'failed'] as const;
const SHORT_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });

export function DocumentsPage({ params, api, session }: PageProps) {
  const ing = ingestionOf(api, session.apiKey);
  const datasetId = params.id ?? '';
  const datasets = useDatasets(api);
  return (
    <>
      <h1 tabIndex={-1}>Documents</h1>
      <IngestionTabs current="Documents" />
      <div class="field narrow">
        <DatasetSelect id="docs-dataset" label="Dataset" value={datasetId} items={datasets.data} onChange={(id) => go('ingestion', 'documents', id)} />
      </div>
      <ProblemNote problem={datasets.problem} />
      {datasetId && <Catalog key={datasetId} ing={ing} datasetId={datasetId} />}
    </>
  );
}

function Catalog({ ing, datasetId }: { ing: Ingestion; datasetId: string }) {
  const [status, setStatus] = useState('');
  // The cursors of the pages before this one, to go back (the service pages forward only).
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1]!;
  const page = useLoad(() => ing.documents(datasetId, PAGE_SIZE, cursor, status), [ing, datasetId, cursor, status]);
  const sources = useSources(ing);
  const [saving, setSaving] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState('');

  const download = async (d: CatalogDocument) => {
    setSaving(d.id);
    setProblem(null);
    setNotice('');
    try {
      const { blob, name } = await ing.download(datasetId, d.id);
      save(blob, name ?? d.name);
      setNotice(`Downloaded ${d.name} (${bytes(blob.size)}).`);
    } catch (e) {
      setProblem(problemOf(e));
    }
    setSaving('');
  };

  return (
    <>
      <div class="field narrow">
        <label for="docs-status">Status</label>
        <select id="docs-status" value={status} onChange={(e) => (setCursors([null]), setStatus(e.currentTarget.value))}>
          <option value="">any</option>
          {STATUSES.map((st) => (
            <option key={st}>{st}</option>
          ))}
        </select>
      </div>
      <Notice text={notice} />
      <Listing
        list={page}
        problem={problem}
        loading="Loading documents…"
        isEmpty={(d) => d.documents.length === 0 && cursors.length === 1}
        empty={
          <p>
            No {status ? `${status} ` : ''}documents in this dataset. Upload files into it from the <a href={href('ingestion', 'upload')}>Upload</a> page, or run a source into it.
          </p>
        }
      >
        {({ documents: docs, next_cursor: next }) => (
          <>
            <DataTable label="Documents" class="documents" columns={['Document', 'Status', 'Format, size', 'Chunks · tokens · pages', 'Source', 'Updated']} hidden="Download">
              {docs.map((d) => (
                <tr key={d.id}>
                  <th scope="row" class="wrap" title={d.path}>
                    {d.name}
                    {d.title && d.title !== d.name && <span class="small muted block">{d.title}</span>}
                  </th>
                  <td class={d.error_type ? 'wrap' : undefined}>
                    <StatusTag status={d.status} />
                    {d.error_type && (
                      <span class="problem-inline">
                        <code>{d.error_type}</code> {d.error_message}
                      </span>
                    )}
                  </td>
                  <td>
                    {d.format ?? d.content_type}, {bytes(d.size_bytes)}
                  </td>
                  <td class="num">
                    {count(d.chunk_count)} · {count(d.tokens)} · {d.pages ?? '—'}
                  </td>
                  <td>
                    {d.source_id ? <a href={href('ingestion', 'sources', d.source_id)}>{nameOf(sources.data, d.source_id)}</a> : '—'}
                    {d.job_id && (
                      <>
                        {' · '}
                        <a href={href('ingestion', 'jobs', d.job_id)} aria-label={`The job that read ${d.name}`}>
                          job
                        </a>
                      </>
                    )}
                  </td>
                  <td title={when(d.updated_at)}>{SHORT_TIME.format(new Date(d.updated_at))}</td>
                  <td class="row-actions">
                    {d.download_available ? (
                      <button type="button" class="link" aria-label={`Download ${d.name}`} disabled={saving === d.id} onClick={() => download(d)}>
                        {saving === d.id ? 'Downloading…' : 'Download'}
                      </button>
                    ) : (
                      <span class="small muted">original not kept</span>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
            <nav class="pager" aria-label="Pages of documents">
              <button type="button" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
                Previous
              </button>
              <span>Page {cursors.length}</span>
              <button type="button" disabled={!next} onClick={() => setCursors([...cursors, next])}>
                Next
              </button>
            </nav>
          </>
        )}
      </Listing>
    </>
  );
}

/** Saves a blob under `name` through an object URL (the key never goes into a URL), then lets the URL go. */
function save(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
