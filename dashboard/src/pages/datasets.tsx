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
import { DatasetForm } from '../components/dataset-form.js';
import { DatasetStatus } from '../components/dataset-status.js';
import { ProblemNote } from '../components/problem-note.js';
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
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState('');
  const [deleting, setDeleting] = useState<Dataset | null>(null);
  const [deleteBusy, setDeleteBusy] = useState(false);
  const [deleteProblem, setDeleteProblem] = useState<Problem | null>(null);
  const busy = list.data?.rows.some((r) => r.dataset.status !== 'ready' || r.stats?.index_status === 'building') ?? false;
  useInterval(list.reload, busy ? POLL_MS : null);

  const confirmDelete = async () => {
    const d = deleting!;
    setDeleteBusy(true);
    setDeleteProblem(null);
    try {
      await api.deleteDataset(d.id);
      setNotice(`Deleted ${d.name}.`);
      setDeleting(null);
      list.reload();
    } catch (e) {
      setDeleteProblem(problemOf(e));
    }
    setDeleteBusy(false);
  };

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Datasets</h1>
        {!creating && (
          <button type="button" class="primary" onClick={() => (setCreating(true), setNotice(''))}>
            New dataset
          </button>
        )}
      </div>
      <p class="notice" role="status">
        {notice}
      </p>
      {creating && (
        <DatasetForm
          api={api}
          onCancel={() => setCreating(false)}
          onCreated={(d) => {
            setCreating(false);
            setNotice(`Created ${d.name}.`);
            list.reload();
          }}
        />
      )}
      <ProblemNote problem={list.problem} />
      {list.data === null ? (
        list.loading && <p class="muted">Loading datasets…</p>
      ) : list.data.total === 0 ? (
        <p>No datasets yet. Create one with New dataset, or through the API.</p>
      ) : (
        <>
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Datasets">
            <table class="datasets">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Vectors</th>
                  <th scope="col">Dim</th>
                  <th scope="col">Metric</th>
                  <th scope="col">Embedding</th>
                  <th scope="col">Index</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.rows.map((r) => (
                  <DatasetRow key={r.dataset.id} row={r} onDelete={() => (setDeleteProblem(null), setDeleting(r.dataset))} />
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} total={list.data.total} onOffset={setOffset} />
        </>
      )}
      {deleting && (
        <ConfirmDialog title={`Delete ${deleting.name}?`} confirmLabel="Delete dataset" busy={deleteBusy} onConfirm={confirmDelete} onCancel={() => setDeleting(null)}>
          <p>Its vectors, index files and bulk-load uploads are deleted with it. This cannot be undone.</p>
          <ProblemNote problem={deleteProblem} />
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
