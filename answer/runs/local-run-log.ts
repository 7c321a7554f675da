/**
 * Answer runs recorded on this machine's disk (embedded mode), so that a run outlives the
 * process: after a restart its record and its chunks are read back, and a stream resumes with
 * `Last-Event-ID`. The cluster records runs in PostgreSQL instead (cluster/run-log.ts); both are
 * the RemoteRuns port of run-view.ts, so the routes never ask which.
 *
 * In the control store's LMDB, node-local databases (never in a cluster's catalog log):
 *
 *   runs       [org, run]       -> RecordedRunRow
 *   run_chunks [org, run, seq]  -> RecordedChunk
 *
 * Chunks are written in batches, at most FLUSH_MS after they were sent and at once for `done`,
 * so the stream never waits on the disk; batches commit in seq order, so the disk always holds a
 * gap-free prefix of a run. A kill -9 loses at most the last FLUSH_MS of chunks. The row of a run
 * is written with its first batch, and its end with the `done` chunk, in one transaction. A run
 * still `running` on disk when a process starts was left by one that died: it is ended then,
 * `failed`, with an `error` chunk and one `done` after the last chunk recorded. Runs are kept
 * RUN_RETENTION_MS after they end, then removed.
 */
import type { Database } from 'lmdb';
import type { ControlStore } from '../../catalog/store.js';
import { RecordedRun, type RecordedChunk, type RecordedRunRow } from './recorded-run.js';
import { RUN_RETENTION_MS } from './run-store.js';
import type { RemoteRuns, RunView } from './run-view.js';
import type { Run, StreamChunk } from './run.js';

/** Longest a chunk waits before it is written (as the cluster's run log). */
const FLUSH_MS = 50;
/** How often runs past their retention are removed. */
const SWEEP_MS = 60_000;
const ORPHAN_MESSAGE = 'the service stopped before this run ended';

type RunKey = [string, string];
type ChunkKey = [string, string, number];

interface Tracked {
  run: Run;
  /** Sent, not yet handed to a write. */
  pending: RecordedChunk[];
  /** The run's row is on disk (written with its first batch). */
  recorded: boolean;
}

/** What one write records of one run. */
interface Batch {
  run: Run;
  chunks: RecordedChunk[];
  /** The run's first batch: what an expired run of the same id left is removed. */
  first: boolean;
  /** The run's row as of this batch (its first, or its last with the end), else null. */
  row: RecordedRunRow | null;
}

export class LocalRunLog implements RemoteRuns {
  private readonly rows: Database<RecordedRunRow, RunKey>;
  private readonly chunks: Database<RecordedChunk, ChunkKey>;
  /** Runs of this process that have not ended, and those with chunks to write. */
  private readonly tracked = new Set<Tracked>();
  private readonly dirty = new Set<Tracked>();
  private timer: NodeJS.Timeout | null = null;
  /** The start's checks (orphans ended, expired runs removed): reads wait for them. */
  private readonly ready: Promise<void>;
  /** Every write, in order: a batch commits only after the ones before it. */
  private writing: Promise<void>;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly store: ControlStore) {
    this.rows = store.open('runs');
    this.chunks = store.open('runChunks');
    // Before any run of this process is recorded: every run on disk still running is an orphan.
    this.ready = this.endOrphans()
      .then(() => this.removeExpired())
      .catch((e: Error) => console.error(`sable: recorded runs could not be checked at start: ${e.message}`));
    this.writing = this.ready;
    this.sweeper = setInterval(() => {
      this.writing = this.writing.then(() => this.removeExpired()).catch(() => {});
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  track(run: Run): void {
    const t: Tracked = { run, pending: [], recorded: false };
    this.tracked.add(t);
    run.observe((chunk) => {
      t.pending.push(chunk.chunk_type === 'event' ? { chunk, at: eventAt(run, chunk.seq) } : { chunk });
      this.dirty.add(t);
      // `done` reaches the client once it is on disk: a restart right after finds the run ended.
      if (chunk.chunk_type === 'done') return this.flush();
      this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
    });
  }

  async find(orgId: string, id: string): Promise<RunView | undefined> {
    await this.ready;
    const row = this.rows.get([orgId, id]);
    if (!row || expired(row, Date.now())) return undefined;
    const chunks = [...this.chunks.getRange({ start: [orgId, id], end: [orgId, id, Infinity] })].map((e) => e.value);
    return new RecordedRun(id, row, chunks);
  }

  /** Writes what is pending (the runs have ended: the service is closing). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.flush();
  }

  /**
   * Writes what every run sent since the last write, in one transaction (one commit every
   * FLUSH_MS however many runs stream); a run's `done` goes with its end.
   */
  private flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batches = [...this.dirty].map((t) => this.take(t));
    this.dirty.clear();
    if (batches.length === 0) return this.writing;
    this.writing = this.writing.then(() =>
      this.store
        .writeLocal(() => {
          for (const { run, chunks, first, row } of batches) {
            const k: RunKey = [run.orgId, run.id];
            // A run id may be chosen again once its run expired: nothing of that run remains.
            if (first) for (const old of this.chunks.getKeys({ start: k, end: [...k, Infinity] })) void this.chunks.remove(old);
            for (const c of chunks) void this.chunks.put([run.orgId, run.id, c.chunk.seq], c);
            if (row) void this.rows.put(k, row);
          }
        })
        .catch((e: Error) => console.error(`sable: chunks of ${batches.length} run(s) were not recorded: ${e.message}`)),
    );
    return this.writing;
  }

  private take(t: Tracked): Batch {
    const { run } = t;
    const chunks = t.pending.splice(0);
    const done = chunks.some((c) => c.chunk.chunk_type === 'done');
    const first = !t.recorded;
    t.recorded = true;
    if (done) this.tracked.delete(t);
    // The row as of this batch: a later batch's end must not reach the disk before its `done`.
    const row: RecordedRunRow | null =
      first || done
        ? {
            query: run.query,
            status: done ? run.status : 'running',
            result: done ? (run.result ?? null) : null,
            failure: done ? run.failure : null,
            started_at: run.startedAt,
            ended_at: done ? (run.endedAt ?? Date.now()) : null,
          }
        : null;
    return { run, chunks, first, row };
  }

  /** Ends the runs a process that died left running: `error`, then `done` with status failed. */
  private async endOrphans(): Promise<void> {
    const orphans = [...this.rows.getRange()].filter((e) => e.value.status === 'running');
    if (orphans.length === 0) return;
    const now = Date.now();
    await this.store.writeLocal(() => {
      for (const { key, value } of orphans) {
        const [org, id] = key;
        // Batches commit in order, so what is on disk is a gap-free prefix; were it not, what
        // follows a gap would break the seqs a client counts on, and goes.
        let last = 0;
        for (const k of this.chunks.getKeys({ start: [org, id], end: [org, id, Infinity] })) {
          if (k[2] === last + 1) last++;
          else void this.chunks.remove(k);
        }
        const error: StreamChunk = { seq: last + 1, chunk_type: 'error', content: ORPHAN_MESSAGE, metadata: { run_id: id, code: 'internal' } };
        const done: StreamChunk = { seq: last + 2, chunk_type: 'done', content: '', metadata: { run_id: id, status: 'failed', error: 'internal' } };
        void this.chunks.put([org, id, error.seq], { chunk: error });
        void this.chunks.put([org, id, done.seq], { chunk: done });
        void this.rows.put(key, { ...value, status: 'failed', failure: { code: 'internal', message: ORPHAN_MESSAGE }, ended_at: now });
      }
    });
    console.error(`sable: ${orphans.length} answer run(s) left running by the last process ended failed`);
  }

  /** Removes the runs past their retention, with their chunks. */
  private async removeExpired(): Promise<void> {
    const now = Date.now();
    const gone = [...this.rows.getRange()].filter((e) => expired(e.value, now)).map((e) => e.key);
    if (gone.length === 0) return;
    await this.store.writeLocal(() => {
      for (const [org, id] of gone) {
        const row = this.rows.get([org, id]);
        // Chosen again by a new run since it was read: that one stays.
        if (!row || !expired(row, now)) continue;
        void this.rows.remove([org, id]);
        for (const k of this.chunks.getKeys({ start: [org, id], end: [org, id, Infinity] })) void this.chunks.remove(k);
      }
    });
  }
}

function expired(row: RecordedRunRow, now: number): boolean {
  return row.ended_at !== null && now - row.ended_at > RUN_RETENTION_MS;
}

/** When the run's trace event of this seq happened (its chunk does not say). */
function eventAt(run: Run, seq: number): string | undefined {
  for (let i = run.events.length - 1; i >= 0; i--) if (run.events[i]!.seq === seq) return run.events[i]!.at;
  return undefined;
}
