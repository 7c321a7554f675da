/**
 * Uploads into a file_upload source: the source (in the URL, so a source's page links here) and
 * the dataset the job loads the files into, then the drop zone with a progress bar per file and
 * the job each drop started.
 */
import { useState } from 'preact/hooks';
import { DatasetSelect, SourceSelect, useDatasets, useSources } from '../components/ingest-pickers.js';
import { IngestionTabs } from '../components/ingestion-tabs.js';
import { ProblemNote } from '../components/problem-note.js';
import { UploadDrop } from '../components/upload-drop.js';
import { ingestionOf } from '../ingestion.js';
import { go, href } from '../router.js';
import type { PageProps } from './index.js';

export function UploadPage({ params, api, session }: PageProps) {
  const ing = ingestionOf(api, session.apiKey);
  const sourceId = params.id ?? '';
  const sources = useSources(ing);
  const datasets = useDatasets(api);
  const [datasetId, setDatasetId] = useState('');
  const uploadable = sources.data?.filter((s) => s.type === 'file_upload') ?? null;
  const chosen = sources.data?.find((s) => s.id === sourceId) ?? null;

  return (
    <>
      <h1 tabIndex={-1}>Upload</h1>
      <IngestionTabs current="Upload" />
      <div class="grid">
        <SourceSelect id="upload-source" label="File upload source" value={sourceId} items={uploadable} onChange={(id) => go('ingestion', 'upload', id)} />
        <DatasetSelect id="upload-dataset" label="Into dataset" value={datasetId} items={datasets.data} onChange={setDatasetId} />
      </div>
      <ProblemNote problem={sources.problem ?? datasets.problem} />
      {uploadable?.length === 0 && (
        <p>
          No file upload source yet: create one on the <a href={href('ingestion')}>Sources</a> page (type File upload).
        </p>
      )}
      {chosen && chosen.type !== 'file_upload' && (
        <p class="problem" role="alert">
          {chosen.name} is a {chosen.type} source: files are uploaded to file upload sources. Run it from <a href={href('ingestion', 'sources', chosen.id)}>its page</a>.
        </p>
      )}
      <UploadDrop ing={ing} sourceId={chosen?.type === 'file_upload' ? sourceId : ''} datasetId={datasetId} />
    </>
  );
}
