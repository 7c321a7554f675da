/**
 * Schedules: a source read into a dataset on a cron, in a time zone. Each shows its cron, zone,
 * next and last run written in the schedule's own zone (the service answers the next run only,
 * not a series of them); it can be run now, paused or resumed, and deleted after a confirmation.
 * The form creates one (the service checks the cron and the zone and words any refusal).
 */
import { useState } from 'preact/hooks';
import type { Dataset } from '../../../client/index.js';
import { problemOf, type Problem } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { DataTable } from '../components/data-table.js';
import { DatasetSelect, nameOf, SourceSelect, useDatasets, useSources } from '../components/ingest-pickers.js';
import { IngestionTabs } from '../components/ingestion-tabs.js';
import { Listing } from '../components/listing.js';
import { OffsetPager } from '../components/offset-pager.js';
import { NewButton, Notice, PageHead } from '../components/page-head.js';
import { ProblemNote } from '../components/problem-note.js';
import { useConfirmedDelete, useCreateForm } from '../flows.js';
import { useLoad } from '../hooks.js';
import { ingestionOf, type Ingestion, type Schedule, type Source } from '../ingestion.js';
import { go, href } from '../router.js';
import type { PageProps } from './index.js';

const PAGE_SIZE = 50;

export function SchedulesPage({ api, session }: PageProps) {
  const ing = ingestionOf(api, session.apiKey);
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => ing.listSchedules(PAGE_SIZE, offset), [ing, offset]);
  const datasets = useDatasets(api);
  const sources = useSources(ing);
  const create = useCreateForm(list.reload);
  const [problem, setProblem] = useState<Problem | null>(null);

  /** Run now, pause, resume and delete: what was done in the notice, or the refusal on the page. */
  const act = async (what: string, call: () => Promise<unknown>) => {
    setProblem(null);
    create.say('');
    try {
      await call();
      create.say(what);
      list.reload();
    } catch (e) {
      setProblem(problemOf(e));
    }
  };
  // A refused delete closes its dialog too: the refusal is shown on the page, as the other actions' are.
  const del = useConfirmedDelete<Schedule>((s) => act(`Deleted ${s.name}.`, () => ing.deleteSchedule(s.id)));

  return (
    <>
      <PageHead title="Schedules">
        <NewButton form={create}>New schedule</NewButton>
      </PageHead>
      <IngestionTabs current="Schedules" />
      <Notice text={create.notice} />
      {create.open && <ScheduleForm ing={ing} sources={sources.data} datasets={datasets.data} onCancel={create.cancel} onCreated={create.created} />}
      <Listing
        list={list}
        problem={problem}
        loading="Loading schedules…"
        isEmpty={(d) => d.total === 0}
        empty={<p>No schedules yet. A schedule reads a source into a dataset on a cron (for example every night at 2, in your time zone).</p>}
      >
        {(data) => (
          <>
            <DataTable label="Schedules" class="schedules" columns={['Name', 'Source into dataset', 'Cron', 'Time zone', 'Next run (last run)']} hidden="Actions">
              {data.schedules.map((s) => (
                <tr key={s.id}>
                  <th scope="row" class="wrap">
                    {s.name}
                    {!s.enabled && <span class="tag warn">paused</span>}
                  </th>
                  <td>
                    <a href={href('ingestion', 'sources', s.source_id)}>{nameOf(sources.data, s.source_id)}</a> → <a href={href('datasets', s.dataset_id)}>{nameOf(datasets.data, s.dataset_id)}</a>
                  </td>
                  <td>
                    <code>{s.cron}</code>
                  </td>
                  <td>{s.timezone}</td>
                  <td>
                    {s.enabled ? <ZonedTime iso={s.next_run_at} zone={s.timezone} /> : <span class="muted">none while paused</span>}
                    <span class="small muted block">
                      {s.last_run_at ? (
                        <>
                          last <ZonedTime iso={s.last_run_at} zone={s.timezone} />
                        </>
                      ) : (
                        'not run yet'
                      )}
                    </span>
                  </td>
                  <td class="row-actions stack">
                    <button type="button" class="link" aria-label={`Run ${s.name} now`} onClick={() => act('', async () => go('ingestion', 'jobs', (await ing.triggerSchedule(s.id)).job_id))}>
                      Run now
                    </button>
                    <button type="button" class="link" aria-label={`${s.enabled ? 'Pause' : 'Resume'} ${s.name}`} onClick={() => act(`${s.enabled ? 'Paused' : 'Resumed'} ${s.name}.`, () => ing.setScheduleEnabled(s.id, !s.enabled))}>
                      {s.enabled ? 'Pause' : 'Resume'}
                    </button>
                    <button type="button" class="link danger" aria-label={`Delete ${s.name}`} onClick={() => del.ask(s)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </DataTable>
            <OffsetPager what="schedules" offset={offset} size={PAGE_SIZE} total={data.total} onOffset={setOffset} />
          </>
        )}
      </Listing>
      {del.target && (
        <ConfirmDialog title={`Delete ${del.target.name}?`} confirmLabel="Delete schedule" {...del.dialog}>
          <p>Jobs it started go on; it starts no more.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** `at` as a clock in `zone` reads it, with the zone's offset: "Nov 28, 2026, 2:00 AM GMT+9". */
export function inZone(at: Date, zone: string): string {
  return new Intl.DateTimeFormat('en', { timeZone: zone, year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' }).format(at);
}

/** A time as the schedule's zone reads it (the zone's abbreviation shown), the reader's own time in its title. */
export function ZonedTime({ iso, zone }: { iso: string | null; zone: string }) {
  if (!iso) return <span class="muted">—</span>;
  const at = new Date(iso);
  let text: string;
  try {
    text = inZone(at, zone);
  } catch {
    text = `${at.toISOString()} (UTC)`;
  }
  return (
    <time dateTime={iso} title={`${at.toLocaleString()} here`}>
      {text}
    </time>
  );
}

interface FormProps {
  ing: Ingestion;
  sources: Source[] | null;
  datasets: Dataset[] | null;
  onCreated: (s: Schedule) => void;
  onCancel: () => void;
}

function ScheduleForm({ ing, sources, datasets, onCreated, onCancel }: FormProps) {
  const [sourceId, setSourceId] = useState('');
  const [datasetId, setDatasetId] = useState('');
  const [cron, setCron] = useState('');
  const [zone, setZone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  const [name, setName] = useState('');
  const [enabled, setEnabled] = useState(true);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      onCreated(await ing.createSchedule({ source_id: sourceId, dataset_id: datasetId, cron: cron.trim(), timezone: zone.trim() || undefined, ...(name.trim() ? { name: name.trim() } : {}), enabled }));
    } catch (err) {
      setBusy(false);
      setProblem(problemOf(err));
    }
  };

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="schedule-create-title">
      <h2 id="schedule-create-title">New schedule</h2>
      <div class="grid">
        <SourceSelect id="sch-source" label="Source" value={sourceId} items={sources} onChange={setSourceId} required />
        <DatasetSelect id="sch-dataset" label="Into dataset" value={datasetId} items={datasets} onChange={setDatasetId} required />
        <div class="field">
          <label for="sch-cron">Cron</label>
          <input id="sch-cron" required value={cron} placeholder="0 2 * * *" aria-describedby="sch-cron-hint" spellcheck={false} onInput={(e) => setCron(e.currentTarget.value)} />
          <span id="sch-cron-hint" class="hint">
            5 fields (minute hour day month weekday), or 6 with seconds first
          </span>
        </div>
        <div class="field">
          <label for="sch-zone">Time zone</label>
          <input id="sch-zone" list="sch-zones" value={zone} aria-describedby="sch-zone-hint" onInput={(e) => setZone(e.currentTarget.value)} />
          <datalist id="sch-zones">
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          <span id="sch-zone-hint" class="hint">
            IANA name; the cron is read in it, daylight saving included
          </span>
        </div>
        <div class="field">
          <label for="sch-name">Name</label>
          <input id="sch-name" maxLength={256} value={name} placeholder="<source> into <dataset> (<cron>, <zone>)" onInput={(e) => setName(e.currentTarget.value)} />
        </div>
      </div>
      <ProblemNote problem={problem} />
      <div class="check">
        <input id="sch-enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
        <label for="sch-enabled">Enabled</label>
      </div>
      <div class="actions">
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create schedule'}
        </button>
      </div>
    </form>
  );
}
