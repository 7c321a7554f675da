/**
 * The organization's datasets: what each holds and how it is indexed, a form to create one and a
 * delete that asks first. The list carries no vector counts or build progress, so each ready
 * dataset's /stats (and /index while it builds) is read beside it; the page reads them again every
 * two seconds while a dataset is provisioning or building.
 */
import { useState } from 'preact/hooks';
import type { Dataset, Stats } from '../../../client/index.js';
import { problemOf, type Api, type IndexStatus, type Problem } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { DataTable } from '../components/data-table.js';
import { DatasetForm } from '../components/dataset-form.js';
import { DatasetStatus } from '../components/dataset-status.js';
import { Listing } from '../components/listing.js';
import { NewButton, Notice, PageHead } from '../components/page-head.js';
import { useConfirmedDelete, useCreateForm } from '../flows.js';
import { count } from '../format.js';
import { useInterval, useLoad } from '../hooks.js';
import { href } from '../router.js';
import type { PageProps } from './index.js';

const PAGE_SIZE = 50;
const POLL_MS = 2000;

interface Row {
  dataset: Dataset;
  stats: Stats | null;
  index: IndexStatus | null;
  problem: Problem | null;
}

async function rows(api: Api, offset: number): Promise<{ rows: Row[]; total: number }> {
  const list = await api.listDatasets(PAGE_SIZE, offset);
  const out = await Promise.all(
    list.datasets.map(async (dataset): Promise<Row> => {
      if (dataset.status !== 'ready') return { dataset, stats: null, index: null, problem: null };
      try {
        const stats = await api.stats(dataset.id);
        const index = stats.index_status === 'building' ? await api.index(dataset.id) : null;
        return { dataset, stats, index, problem: null };
      } catch (e) {
        return { dataset, stats: null, index: null, problem: problemOf(e) };
      }
    }),
  );
  return { rows: out, total: list.total };
}

export function DatasetsPage({ api }: PageProps) {
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => rows(api, offset), [api, offset]);
  const create = useCreateForm(list.reload);
  const del = useConfirmedDelete<Dataset>((d) => api.deleteDataset(d.id), (d) => (create.say(`Deleted ${d.name}.`), list.reload()));
  const busy = list.data?.rows.some((r) => r.dataset.status !== 'ready' || r.stats?.index_status === 'building') ?? false;
  useInterval(list.reload, busy ? POLL_MS : null);

  return (
    <>
      <PageHead title="Datasets">
        <NewButton form={create}>New dataset</NewButton>
      </PageHead>
      <Notice text={create.notice} />
      {create.open && <DatasetForm api={api} onCancel={create.cancel} onCreated={create.created} />}
      <Listing list={list} loading="Loading datasets…" isEmpty={(d) => d.total === 0} empty={<p>No datasets yet. Create one with New dataset, or through the API.</p>}>
        {(data) => (
          <>
            <DataTable label="Datasets" class="datasets" columns={['Name', 'Vectors', 'Dim', 'Metric', 'Embedding', 'Index', 'Status']} hidden="Actions">
              {data.rows.map((r) => (
                <DatasetRow key={r.dataset.id} row={r} onDelete={() => del.ask(r.dataset)} />
              ))}
            </DataTable>
            <Pager offset={offset} total={data.total} onOffset={setOffset} />
          </>
        )}
      </Listing>
      {del.target && (
        <ConfirmDialog title={`Delete ${del.target.name}?`} confirmLabel="Delete dataset" {...del.dialog}>
          <p>Its vectors, index files and bulk-load uploads are deleted with it. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

function DatasetRow({ row: { dataset: d, stats, index, problem }, onDelete }: { row: Row; onDelete: () => void }) {
  return (
    <tr>
      <th scope="row">
        <a href={href('datasets', d.id)}>{d.name}</a>
      </th>
      <td class="num">{stats ? count(stats.vector_count) : '—'}</td>
      <td class="num">{d.dim}</td>
      <td>{d.metric}</td>
      <td>
        {d.embedding.provider}/{d.embedding.model}
      </td>
      <td>
        {d.index_type}
        {d.hybrid && <span class="tag">hybrid</span>}
      </td>
      <td>
        <DatasetStatus status={d.status} stats={stats} index={index} />
        {problem && <span class="problem-inline">{problem.message}</span>}
      </td>
      <td class="row-actions">
        <a href={href('search', d.id)} aria-label={`Search ${d.name}`}>
          Search
        </a>
        <button type="button" class="link danger" onClick={onDelete} aria-label={`Delete ${d.name}`}>
          Delete
        </button>
      </td>
    </tr>
  );
}

function Pager({ offset, total, onOffset }: { offset: number; total: number; onOffset: (o: number) => void }) {
  if (total <= PAGE_SIZE) return <p class="muted small">{count(total)} datasets</p>;
  return (
    <nav class="pager" aria-label="Pages of datasets">
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - PAGE_SIZE))}>
        Previous
      </button>
      <span>
        {offset + 1}–{Math.min(offset + PAGE_SIZE, total)} of {count(total)}
      </span>
      <button type="button" disabled={offset + PAGE_SIZE >= total} onClick={() => onOffset(offset + PAGE_SIZE)}>
        Next
      </button>
    </nav>
  );
}
