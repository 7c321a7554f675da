/**
 * Files into a file_upload source: dropped on the zone, or chosen with its Choose files button
 * (the keyboard's way in). Each drop is one upload: init declares the files (one job), each file
 * is PUT to its upload URL with its own progress bar (three at a time), complete hands the files
 * that arrived to the job; the job's state is then read every 2 s until it ends.
 */
import { useRef, useState } from 'preact/hooks';
import { problemOf, type Problem } from '../api.js';
import { bytes } from '../format.js';
import { useInterval } from '../hooks.js';
import { contentTypeOf, isActiveJob, putFile, type Ingestion, type Job } from '../ingestion.js';
import { href } from '../router.js';
import { JobProgress } from './job-status.js';
import { ProblemNote } from './problem-note.js';

const POLL_MS = 2000;
const PARALLEL_PUTS = 3;

interface Item {
  name: string;
  size: number;
  type: string;
  sent: number;
  state: 'waiting' | 'uploading' | 'uploaded' | 'failed' | 'skipped';
  problem: Problem | null;
}

interface Batch {
  id: number;
  items: Item[];
  state: 'declaring' | 'uploading' | 'completing' | 'sent' | 'failed';
  job: Job | null;
  problem: Problem | null;
}

interface Props {
  ing: Ingestion;
  sourceId: string;
  datasetId: string;
}

let batchIds = 0;

export function UploadDrop({ ing, sourceId, datasetId }: Props) {
  const [batches, setBatches] = useState<Batch[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const ready = sourceId !== '' && datasetId !== '';
  const polling = batches.some((b) => b.job && isActiveJob(b.job));

  const update = (id: number, fn: (b: Batch) => Batch) => setBatches((all) => all.map((b) => (b.id === id ? fn(b) : b)));
  const updateItem = (id: number, i: number, patch: Partial<Item>) => update(id, (b) => ({ ...b, items: b.items.map((it, j) => (j === i ? { ...it, ...patch } : it)) }));

  useInterval(() => {
    for (const b of batches) {
      if (!b.job || !isActiveJob(b.job)) continue;
      ing.getJob(b.job.job_id).then(
        (job) => update(b.id, (x) => ({ ...x, job })),
        (e) => update(b.id, (x) => ({ ...x, problem: problemOf(e) })),
      );
    }
  }, polling ? POLL_MS : null);

  const send = async (files: File[]) => {
    if (!ready || files.length === 0) return;
    const id = ++batchIds;
    // An empty file has nothing to ingest, and the service takes sizes of one byte and more.
    const items: Item[] = files.map((f) => ({ name: f.name, size: f.size, type: contentTypeOf(f), sent: 0, state: f.size === 0 ? 'skipped' : 'waiting', problem: null }));
    setBatches((all) => [{ id, items, state: 'declaring', job: null, problem: null }, ...all]);
    const chosen = files.map((f, i) => ({ f, i })).filter(({ f }) => f.size > 0);
    if (chosen.length === 0) return update(id, (b) => ({ ...b, state: 'failed', problem: { message: 'every file is empty: nothing to upload', code: null, requestId: null } }));
    try {
      const init = await ing.uploadInit(sourceId, datasetId, chosen.map(({ f, i }) => ({ name: f.name, size_bytes: f.size, content_type: items[i]!.type })));
      update(id, (b) => ({ ...b, state: 'uploading' }));
      const arrived: string[] = [];
      let next = 0;
      const worker = async () => {
        while (next < chosen.length) {
          const k = next++;
          const { f, i } = chosen[k]!;
          const target = init.uploads[k]!;
          updateItem(id, i, { state: 'uploading' });
          try {
            await putFile(target.upload_url, f, items[i]!.type, (sent) => updateItem(id, i, { sent }));
            arrived.push(target.file_id);
            updateItem(id, i, { state: 'uploaded', sent: f.size });
          } catch (e) {
            updateItem(id, i, { state: 'failed', problem: problemOf(e) });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL_PUTS, chosen.length) }, worker));
      update(id, (b) => ({ ...b, state: 'completing' }));
      // Files whose bytes did not arrive are left out: the job skips them.
      await ing.uploadComplete(sourceId, init.job_id, arrived);
      const job = await ing.getJob(init.job_id);
      update(id, (b) => ({ ...b, state: 'sent', job }));
    } catch (e) {
      update(id, (b) => ({ ...b, state: 'failed', problem: problemOf(e) }));
    }
  };

  return (
    <>
      <div
        class={`drop${over ? ' over' : ''}${ready ? '' : ' off'}`}
        role="group"
        aria-labelledby="drop-title"
        aria-describedby="drop-hint"
        onDragEnter={(e) => (e.preventDefault(), setOver(ready))}
        onDragOver={(e) => {
          e.preventDefault();
          if (e.dataTransfer) e.dataTransfer.dropEffect = ready ? 'copy' : 'none';
        }}
        onDragLeave={(e) => e.currentTarget === e.target && setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          send([...(e.dataTransfer?.files ?? [])]);
        }}
      >
        <p id="drop-title" class="drop-title">
          Drop files here
        </p>
        <p id="drop-hint" class="small muted">
          {ready ? 'PDF, Word, Excel, HTML, Markdown, CSV, text and source code; each drop is one job.' : 'Choose a file upload source and a dataset first.'}
        </p>
        <label for="upload-files" class="visually-hidden">
          Files to upload
        </label>
        <input
          id="upload-files"
          ref={input}
          type="file"
          multiple
          hidden
          onChange={(e) => {
            const files = [...(e.currentTarget.files ?? [])];
            e.currentTarget.value = '';
            send(files);
          }}
        />
        <button type="button" disabled={!ready} onClick={() => input.current?.click()}>
          Choose files…
        </button>
      </div>
      {batches.map((b) => (
        <BatchView key={b.id} batch={b} />
      ))}
    </>
  );
}

const STATE_WORDS: Record<Batch['state'], string> = {
  declaring: 'Declaring the files…',
  uploading: 'Uploading…',
  completing: 'Handing the files to the job…',
  sent: 'Uploaded.',
  failed: 'The upload failed.',
};

function BatchView({ batch: b }: { batch: Batch }) {
  const label = `Upload of ${b.items.length} file${b.items.length === 1 ? '' : 's'}`;
  return (
    <section class="card upload" aria-label={label}>
      <p class="upload-head">
        <strong>{STATE_WORDS[b.state]}</strong>
        {b.job && (
          <>
            {' '}
            <a href={href('ingestion', 'jobs', b.job.job_id)}>Job {b.job.job_id.slice(0, 8)}</a> <JobProgress job={b.job} label={`Progress of job ${b.job.job_id.slice(0, 8)}`} />
          </>
        )}
      </p>
      <ProblemNote problem={b.problem} />
      <ul class="upload-files">
        {b.items.map((it, i) => (
          <li key={i}>
            <span class="file-name">{it.name}</span>
            <progress max={Math.max(it.size, 1)} value={it.sent} aria-label={`Upload of ${it.name}`} />
            <span class="small">
              {it.state === 'skipped' ? 'empty: skipped' : it.state === 'failed' ? 'failed' : `${percentOf(it)} % of ${bytes(it.size)}`}
            </span>
            <span class={`small upload-state ${it.state}`}>{it.state}</span>
            {it.problem && <span class="problem-inline">{it.problem.message}</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}

function percentOf(it: Item): number {
  return it.size === 0 ? 0 : Math.round((it.sent / it.size) * 100);
}
