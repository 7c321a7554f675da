/**
 * A job's files: how many are in each status (a filter), and for each its size, type, status and
 * reason, chunks, embeddings and vectors, time, retries and error, in pages of 100.
 */
import { useState } from 'preact/hooks';
import { bytes, count } from '../format.js';
import { useLoad } from '../hooks.js';
import { FILE_STATUSES, type Ingestion } from '../ingestion.js';
import { DataTable } from './data-table.js';
import { StatusTag } from './job-status.js';
import { Listing } from './listing.js';
import { OffsetPager } from './offset-pager.js';

const PAGE_SIZE = 100;

/** `stamp`: what the job's page last read of it; the files are read again whenever it changes. */
export function JobFiles({ ing, jobId, stamp }: { ing: Ingestion; jobId: string; stamp: string }) {
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const files = useLoad(() => ing.jobFiles(jobId, PAGE_SIZE, offset, status), [ing, jobId, offset, status, stamp]);
  const data = files.data;

  return (
    <section class="card" aria-labelledby="files-title">
      <h2 id="files-title">Files</h2>
      {data && (
        <p class="counts">
          {FILE_STATUSES.map((s) => (
            <span key={s}>
              <StatusTag status={s} /> {count(data.counts[s] ?? 0)}
            </span>
          ))}
        </p>
      )}
      <div class="field narrow">
        <label for="files-status">Show files</label>
        <select id="files-status" value={status} onChange={(e) => (setOffset(0), setStatus(e.currentTarget.value))}>
          <option value="">in every status</option>
          {FILE_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <Listing list={files} isEmpty={(d) => d.total === 0} empty={<p class="muted">{status ? `No ${status} files.` : 'No files yet: a source job lists its files when it starts.'}</p>}>
        {(page) => (
          <>
            <DataTable label="Job files" class="job-files" columns={['File', 'Status', 'Size', 'Type', 'Chunks', 'Vectors', 'Time', 'Error']}>
              {page.files.map((f) => (
                <tr key={f.uuid}>
                  <th scope="row" title={f.file_path}>
                    {f.file_name}
                  </th>
                  <td>
                    <StatusTag status={f.status} />
                    {f.status_reason && f.status !== 'failed' && <span class="small muted"> {f.status_reason}</span>}
                    {f.retry_count > 0 && <span class="small muted"> retried {f.retry_count}×</span>}
                  </td>
                  <td class="num">{bytes(f.file_size_bytes)}</td>
                  <td>{f.content_type}</td>
                  <td class="num">{count(f.chunks_created)}</td>
                  <td class="num">{count(f.vectors_inserted)}</td>
                  <td class="num">{f.processing_duration_ms} ms</td>
                  <td class="wrap">
                    {f.error_type && (
                      <span class="problem-inline">
                        <code>{f.error_type}</code> {f.error_message}
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
            <OffsetPager what="files" offset={offset} size={PAGE_SIZE} total={page.total} onOffset={setOffset} />
          </>
        )}
      </Listing>
    </section>
  );
}
