/**
 * The organization's ingestion sources, listed by type with their config (secret fields masked by
 * the service), a form to create one (generated from its type's schema, validated by the service
 * on request) and a delete that asks first; a source still used by an enabled schedule or a job
 * in flight is refused with the service's words, and may then be deleted with its schedules
 * disabled.
 */
import { useState } from 'preact/hooks';
import { problemOf, type Problem } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { IngestionTabs } from '../components/ingestion-tabs.js';
import { OffsetPager } from '../components/offset-pager.js';
import { ProblemNote } from '../components/problem-note.js';
import { SourceConfig } from '../components/source-config.js';
import { SourceForm } from '../components/source-form.js';
import { when } from '../format.js';
import { useLoad } from '../hooks.js';
import { ingestionOf, type Source } from '../ingestion.js';
import { href } from '../router.js';
import type { PageProps } from './index.js';

const PAGE_SIZE = 200;

export function SourcesPage({ api, session }: PageProps) {
  const ing = ingestionOf(api, session.apiKey);
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => Promise.all([ing.listSources(PAGE_SIZE, offset), ing.sourceTypes()]), [ing, offset]);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState('');
  const [deleting, setDeleting] = useState<Source | null>(null);

  const [page, types] = list.data ?? [null, null];
  const groups = (types?.source_types ?? []).map((t) => ({ ...t, sources: page?.sources.filter((s) => s.type === t.type) ?? [] })).filter((g) => g.sources.length > 0);

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Sources</h1>
        {!creating && (
          <button type="button" class="primary" onClick={() => (setCreating(true), setNotice(''))}>
            New source
          </button>
        )}
      </div>
      <IngestionTabs current="Sources" />
      <p class="notice" role="status">
        {notice}
      </p>
      {creating && (
        <SourceForm
          ing={ing}
          onCancel={() => setCreating(false)}
          onCreated={(s) => {
            setCreating(false);
            setNotice(`Created ${s.name}.`);
            list.reload();
          }}
        />
      )}
      <ProblemNote problem={list.problem} />
      {page === null ? (
        list.loading && <p class="muted">Loading sources…</p>
      ) : page.total === 0 ? (
        <p>No sources yet. Create one with New source: a file upload source takes files from this page (Upload).</p>
      ) : (
        <>
          {groups.map((g) => (
            <section key={g.type} aria-labelledby={`type-${g.type}`}>
              <h2 id={`type-${g.type}`}>
                {g.name} <span class="muted small">({g.type}, {g.sources.length})</span>
              </h2>
              <div class="table-wrap" tabIndex={0} role="region" aria-label={`${g.name} sources`}>
                <table class="sources">
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Config</th>
                      <th scope="col">Created</th>
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {g.sources.map((s) => (
                      <tr key={s.id}>
                        <th scope="row">
                          <a href={href('ingestion', 'sources', s.id)}>{s.name}</a>
                          {s.description && <span class="small muted block">{s.description}</span>}
                        </th>
                        <td class="wrap">
                          <SourceConfig config={s.config} compact />
                        </td>
                        <td>{when(s.created_at)}</td>
                        <td class="row-actions">
                          {s.type === 'file_upload' && (
                            <a href={href('ingestion', 'upload', s.id)} aria-label={`Upload files to ${s.name}`}>
                              Upload
                            </a>
                          )}
                          <button type="button" class="link danger" onClick={() => setDeleting(s)} aria-label={`Delete ${s.name}`}>
                            Delete
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
          ))}
          <OffsetPager what="sources" offset={offset} size={PAGE_SIZE} total={page.total} onOffset={setOffset} />
        </>
      )}
      {deleting && (
        <DeleteSource
          source={deleting}
          onDelete={(force) => ing.deleteSource(deleting.id, force)}
          onDone={() => (setNotice(`Deleted ${deleting.name}.`), setDeleting(null), list.reload())}
          onCancel={() => setDeleting(null)}
        />
      )}
    </>
  );
}

/**
 * The delete question. A source in use answers 409 source_in_use (enabled schedules, jobs in
 * flight): the dialog then shows why and offers the forced delete, which disables its schedules.
 */
export function DeleteSource({ source, onDelete, onDone, onCancel }: { source: Source; onDelete: (force: boolean) => Promise<void>; onDone: () => void; onCancel: () => void }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const inUse = problem?.code === 'source_in_use';
  const confirm = async () => {
    setBusy(true);
    try {
      await onDelete(inUse);
      onDone();
    } catch (e) {
      setProblem(problemOf(e));
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog title={`Delete ${source.name}?`} confirmLabel={inUse ? 'Disable its schedules and delete' : 'Delete source'} busy={busy} onConfirm={confirm} onCancel={onCancel}>
      <p>Documents already ingested from it stay in their datasets. This cannot be undone.</p>
      <ProblemNote problem={problem} />
    </ConfirmDialog>
  );
}
