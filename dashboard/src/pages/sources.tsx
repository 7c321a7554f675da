/**
 * The organization's ingestion sources, listed by type with their config (secret fields masked by
 * the service), a form to create one (generated from its type's schema, validated by the service
 * on request) and a delete that asks first; a source still used by an enabled schedule or a job
 * in flight is refused with the service's words, and may then be deleted with its schedules
 * disabled.
 */
import { useState } from 'preact/hooks';
import type { SourceList, SourceTypes } from '../../../client/index.js';
import type { Problem } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { DataTable } from '../components/data-table.js';
import { IngestionTabs } from '../components/ingestion-tabs.js';
import { Listing } from '../components/listing.js';
import { OffsetPager } from '../components/offset-pager.js';
import { NewButton, Notice, PageHead } from '../components/page-head.js';
import { SourceConfig } from '../components/source-config.js';
import { SourceForm } from '../components/source-form.js';
import { useConfirmedDelete, useCreateForm, type ConfirmedDelete } from '../flows.js';
import { when } from '../format.js';
import { useLoad } from '../hooks.js';
import { ingestionOf, type Ingestion, type Source } from '../ingestion.js';
import { href } from '../router.js';
import type { PageProps } from './index.js';

const PAGE_SIZE = 200;

export function SourcesPage({ api, session }: PageProps) {
  const ing = ingestionOf(api, session.apiKey);
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => Promise.all([ing.listSources(PAGE_SIZE, offset), ing.sourceTypes()]), [ing, offset]);
  const create = useCreateForm(list.reload);
  const del = useSourceDelete(ing, (s) => (create.say(`Deleted ${s.name}.`), list.reload()));

  return (
    <>
      <PageHead title="Sources">
        <NewButton form={create}>New source</NewButton>
      </PageHead>
      <IngestionTabs current="Sources" />
      <Notice text={create.notice} />
      {create.open && <SourceForm ing={ing} onCancel={create.cancel} onCreated={create.created} />}
      <Listing
        list={list}
        loading="Loading sources…"
        isEmpty={([page]) => page.total === 0}
        empty={<p>No sources yet. Create one with New source: a file upload source takes files from this page (Upload).</p>}
      >
        {([page, types]) => (
          <>
            {byType(page, types).map((g) => (
              <section key={g.type} aria-labelledby={`type-${g.type}`}>
                <h2 id={`type-${g.type}`}>
                  {g.name} <span class="muted small">({g.type}, {g.sources.length})</span>
                </h2>
                <DataTable label={`${g.name} sources`} class="sources" columns={['Name', 'Config', 'Created']} hidden="Actions">
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
                        <button type="button" class="link danger" onClick={() => del.ask(s)} aria-label={`Delete ${s.name}`}>
                          Delete
                        </button>
                      </td>
                    </tr>
                  ))}
                </DataTable>
              </section>
            ))}
            <OffsetPager what="sources" offset={offset} size={PAGE_SIZE} total={page.total} onOffset={setOffset} />
          </>
        )}
      </Listing>
      <DeleteSource del={del} />
    </>
  );
}

/** The page's sources by type, in the order the service lists the types (a type without any left out). */
function byType(page: SourceList, types: SourceTypes) {
  return types.source_types.map((t) => ({ ...t, sources: page.sources.filter((s) => s.type === t.type) })).filter((g) => g.sources.length > 0);
}

/**
 * A source's delete after a confirmation. A source in use answers 409 source_in_use (enabled
 * schedules, jobs in flight): the dialog then shows why, and confirming again deletes it forced,
 * which disables its schedules.
 */
export function useSourceDelete(ing: Ingestion, removed: (s: Source) => void): ConfirmedDelete<Source> {
  return useConfirmedDelete<Source>((s, refused) => ing.deleteSource(s.id, inUse(refused)), removed);
}

/** The delete question of a source (useSourceDelete's), with the forced delete it offers once the service said the source is in use. */
export function DeleteSource({ del }: { del: ConfirmedDelete<Source> }) {
  if (!del.target) return null;
  return (
    <ConfirmDialog title={`Delete ${del.target.name}?`} confirmLabel={inUse(del.dialog.problem) ? 'Disable its schedules and delete' : 'Delete source'} {...del.dialog}>
      <p>Documents already ingested from it stay in their datasets. This cannot be undone.</p>
    </ConfirmDialog>
  );
}

const inUse = (refused: Problem | null) => refused?.code === 'source_in_use';
