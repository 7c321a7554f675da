/**
 * Answer runs across the nodes of a cluster (migration 0005; design: ../shared/design/cluster.md
 * §3.7). The node that received a question owns its run and records it: the run's row with a
 * lease it renews, and every chunk in seq order, written in small batches (at most every
 * FLUSH_MS, at once for `done`) and announced by NOTIFY. Any node reads a run from here: its
 * record, and its chunks after a seq, live until `done`, so a stream resumes on any node with
 * `Last-Event-ID`.
 *
 * Each batch is written under the run's row lock and only while the row says this node owns a
 * running run: a run ended by another node (its owner was cut off past its lease) takes no more
 * chunks from it. Any node ends a run whose owner's lease lapsed past the grace: an `error`
 * chunk, then `done` with status failed; the unique index on `done` chunks means exactly one
 * `done` whoever gets there first. Runs are kept RUN_RETENTION_MS after they end.
 */
import type { Run, RunStatus, StreamChunk, TraceEvent } from '../answer/runs/run.js';
import { RUN_RETENTION_MS } from '../answer/runs/run-store.js';
import type { RemoteRuns, RunRecordView, RunView } from '../answer/runs/run-view.js';
import { withTransaction, type Pool } from '../outbound/postgres/pool.js';
import type { Notifications } from './notifications.js';

const CHANNEL = 'sable_runs';
/** Longest a chunk waits before it is written (the design: batches of at most 50 ms). */
const FLUSH_MS = 50;

export interface RunLogOptions {
  pool: Pool;
  notifications: Notifications;
  nodeId: string;
  /** The lease of a run its owner renews; past it (and the grace) another node ends the run. */
  leaseMs: number;
  graceMs: number;
  /** How often leases are renewed and lapsed runs looked for. */
  intervalMs: number;
}

interface Tracked {
  run: Run;
  pending: StreamChunk[];
  timer: NodeJS.Timeout | null;
  writing: Promise<void>;
  /** Another node ended the run (this node lost its lease): nothing more is written. */
  fenced: boolean;
}

export class RunLog implements RemoteRuns {
  private readonly tracked = new Map<string, Tracked>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly opts: RunLogOptions) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.opts.notifications.subscribe(CHANNEL, (payload) => {
      if (payload === '') for (const set of this.waiters.values()) for (const w of set) w();
      else for (const w of this.waiters.get(payload) ?? []) w();
    });
    const tick = () => {
      void this.maintain()
        .catch(() => {})
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, this.opts.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, this.opts.intervalMs).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    await Promise.all([...this.tracked.values()].map((t) => this.flush(t)));
  }

  track(run: Run): void {
    const t: Tracked = { run, pending: [], timer: null, writing: Promise.resolve(), fenced: false };
    this.tracked.set(key(run.orgId, run.id), t);
    t.writing = this.opts.pool
      .query(
        `INSERT INTO runs (org_id, run_id, query, owner, lease_until) VALUES ($1, $2, $3, $4, now() + $5::double precision * interval '1 millisecond')
         ON CONFLICT (org_id, run_id) DO UPDATE SET query = EXCLUDED.query, owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
           status = 'running', result = NULL, failure = NULL, started_at = now(), ended_at = NULL`,
        [run.orgId, run.id, run.query, this.opts.nodeId, this.opts.leaseMs],
      )
      .then(
        () => undefined,
        (e: Error) => console.error(`sable: run ${run.id} is not recorded for the other nodes: ${e.message}`),
      );
    run.observe((chunk) => {
      if (t.fenced) return;
      t.pending.push(chunk);
      // The client gets `done` once it is recorded: another node read right after finds the run ended.
      if (chunk.chunk_type === 'done') return this.flush(t);
      t.timer ??= setTimeout(() => void this.flush(t), FLUSH_MS);
    });
  }

  async find(orgId: string, id: string): Promise<RunView | undefined> {
    const { rows } = await this.opts.pool.query<{ query: string; status: RunStatus; result: unknown; failure: { code: string; message: string } | null }>(
      `SELECT query, status, result, failure FROM runs WHERE org_id = $1 AND run_id = $2 AND (ended_at IS NULL OR ended_at > now() - $3::double precision * interval '1 millisecond')`,
      [orgId, id, RUN_RETENTION_MS],
    );
    const row = rows[0];
    if (!row) return undefined;
    const view = new LoggedRun(this, orgId, id, row.query, row.status, row.result, row.failure);
    await view.refresh();
    return view;
  }

  /**
   * The run's row, then its chunks after `after`, in order. The row is read first: its end
   * commits with the last chunks, so a row that says the run ended comes with every chunk.
   */
  async read(orgId: string, id: string, after: number) {
    const row = await this.opts.pool.query<{ status: RunStatus; result: unknown; failure: { code: string; message: string } | null }>(
      'SELECT status, result, failure FROM runs WHERE org_id = $1 AND run_id = $2',
      [orgId, id],
    );
    const chunks = await this.opts.pool.query<{ chunk: StreamChunk }>('SELECT chunk FROM run_events WHERE org_id = $1 AND run_id = $2 AND seq > $3 ORDER BY seq', [orgId, id, after]);
    return { chunks: chunks.rows.map((r) => r.chunk), row: row.rows[0] };
  }

  /** Calls `wake` at each notification of the run (and every poll), until the returned function. */
  watch(orgId: string, id: string, wake: () => void): () => void {
    const k = key(orgId, id);
    let set = this.waiters.get(k);
    if (!set) this.waiters.set(k, (set = new Set()));
    set.add(wake);
    const poll = setInterval(wake, 1000);
    poll.unref();
    return () => {
      clearInterval(poll);
      set.delete(wake);
      if (set.size === 0) this.waiters.delete(k);
    };
  }

  /** Writes what the run sent since the last batch, while this node still owns it running. */
  private flush(t: Tracked): Promise<void> {
    if (t.timer) clearTimeout(t.timer);
    t.timer = null;
    const batch = t.pending.splice(0);
    if (batch.length === 0) return t.writing;
    const { run } = t;
    const done = batch.find((c) => c.chunk_type === 'done');
    t.writing = t.writing.then(() =>
      withTransaction(this.opts.pool, async (c) => {
        const owner = await c.query<{ owner: string; status: string }>('SELECT owner, status FROM runs WHERE org_id = $1 AND run_id = $2 FOR UPDATE', [run.orgId, run.id]);
        const row = owner.rows[0];
        if (!row || row.owner !== this.opts.nodeId || row.status !== 'running') {
          t.fenced = true;
          // Ended elsewhere while this node could not renew: its answer is not the run's.
          run.abort.abort(new Error('the run was ended by another node'));
          return;
        }
        await c.query(
          `INSERT INTO run_events (org_id, run_id, seq, chunk) SELECT $1, $2, (x->>'seq')::int, x FROM jsonb_array_elements($3::jsonb) AS x ON CONFLICT DO NOTHING`,
          [run.orgId, run.id, JSON.stringify(batch)],
        );
        if (done) {
          await c.query(`UPDATE runs SET status = $3, result = $4, failure = $5, ended_at = now() WHERE org_id = $1 AND run_id = $2`, [
            run.orgId,
            run.id,
            run.status,
            run.result === null || run.result === undefined ? null : JSON.stringify(run.result),
            run.failure ? JSON.stringify(run.failure) : null,
          ]);
        }
        await c.query('SELECT pg_notify($1, $2)', [CHANNEL, key(run.orgId, run.id)]);
      }).then(
        () => {
          if (done) this.tracked.delete(key(run.orgId, run.id));
        },
        (e: Error) => console.error(`sable: chunks of run ${run.id} were not recorded: ${e.message}`),
      ),
    );
    return t.writing;
  }

  /** Renews this node's runs' leases, ends runs whose owner is gone, forgets expired ones. */
  private async maintain(): Promise<void> {
    const { pool, nodeId, leaseMs, graceMs } = this.opts;
    await pool.query(`UPDATE runs SET lease_until = now() + $2::double precision * interval '1 millisecond' WHERE owner = $1 AND status = 'running'`, [nodeId, leaseMs]);
    const { rows } = await pool.query<{ org_id: string; run_id: string }>(
      `SELECT org_id, run_id FROM runs WHERE status = 'running' AND lease_until < now() - $1::double precision * interval '1 millisecond' LIMIT 50`,
      [graceMs],
    );
    for (const r of rows) await this.endLapsed(r.org_id, r.run_id).catch(() => {});
    await pool.query(`DELETE FROM runs WHERE status <> 'running' AND ended_at < now() - $1::double precision * interval '1 millisecond'`, [RUN_RETENTION_MS]);
  }

  /** A run whose owner stopped renewing: `error`, then `done` with status failed (once). */
  private async endLapsed(orgId: string, runId: string): Promise<void> {
    await withTransaction(this.opts.pool, async (c) => {
      const ended = await c.query(
        `UPDATE runs SET status = 'failed', ended_at = now(), failure = $3
          WHERE org_id = $1 AND run_id = $2 AND status = 'running' AND lease_until < now() RETURNING run_id`,
        [orgId, runId, JSON.stringify({ code: 'internal', message: 'the node answering this run stopped before it ended' })],
      );
      if (ended.rowCount === 0) return; // another node ended it first, or its owner renewed
      const { rows } = await c.query<{ last: number | null }>('SELECT max(seq) AS last FROM run_events WHERE org_id = $1 AND run_id = $2', [orgId, runId]);
      const seq = (rows[0]?.last ?? 0) + 1;
      const error: StreamChunk = { seq, chunk_type: 'error', content: 'the node answering this run stopped before it ended', metadata: { run_id: runId, code: 'internal' } };
      const done: StreamChunk = { seq: seq + 1, chunk_type: 'done', content: '', metadata: { run_id: runId, status: 'failed' } };
      await c.query(`INSERT INTO run_events (org_id, run_id, seq, chunk) VALUES ($1, $2, $3, $4), ($1, $2, $5, $6) ON CONFLICT DO NOTHING`, [orgId, runId, seq, error, seq + 1, done]);
      await c.query('SELECT pg_notify($1, $2)', [CHANNEL, key(orgId, runId)]);
    });
  }
}

/** A run read from the log: what another node recorded, live until its `done`. */
class LoggedRun implements RunView {
  private chunks: StreamChunk[] = [];

  constructor(
    private readonly log: RunLog,
    private readonly orgId: string,
    readonly id: string,
    readonly query: string,
    public status: RunStatus,
    public result: unknown,
    public failure: { code: string; message: string } | null,
  ) {}

  get running(): boolean {
    return this.status === 'running' && !this.chunks.some((c) => c.chunk_type === 'done');
  }

  get lastSeq(): number {
    return this.chunks.at(-1)?.seq ?? 0;
  }

  /** Reads the chunks written since the last read, and the run's row. */
  async refresh(): Promise<StreamChunk[]> {
    const { chunks, row } = await this.log.read(this.orgId, this.id, this.lastSeq);
    // Chunks are written in seq order, batch by batch: only a gap-free run of them is taken.
    const fresh: StreamChunk[] = [];
    let next = this.lastSeq + 1;
    for (const c of chunks) {
      if (c.seq !== next) break;
      fresh.push(c);
      next++;
    }
    this.chunks.push(...fresh);
    let latest = row;
    // The `done` chunk and the row's end commit together; two reads may straddle that commit.
    if (fresh.some((c) => c.chunk_type === 'done') && latest?.status === 'running') latest = (await this.log.read(this.orgId, this.id, this.lastSeq)).row;
    if (latest) {
      this.status = latest.status;
      this.result = latest.result;
      this.failure = latest.failure;
    }
    return fresh;
  }

  record(after = 0): RunRecordView {
    const events: TraceEvent[] = this.chunks
      .filter((c) => c.chunk_type === 'event' && c.seq > after)
      .map((c) => {
        const { run_id: _, seq: __, ...rest } = c.metadata as Record<string, unknown>;
        return { ...(rest as Omit<TraceEvent, 'seq'>), seq: c.seq };
      });
    const answer = this.chunks.filter((c) => c.chunk_type === 'text').map((c) => c.content).join('');
    return { run_id: this.id, status: this.status, events, last_seq: this.lastSeq, answer };
  }

  attach(after: number, listener: (chunk: StreamChunk) => void): () => void {
    let sent = after;
    const deliver = (chunks: StreamChunk[]) => {
      for (const c of chunks) {
        if (c.seq <= sent) continue;
        sent = c.seq;
        listener(c);
      }
    };
    deliver(this.chunks);
    if (!this.running) return () => undefined;
    let stopped = false;
    let reading = false;
    const wake = () => {
      if (stopped || reading) return;
      reading = true;
      void this.refresh()
        .then((fresh) => {
          deliver(fresh);
          if (!this.running) stop();
        })
        .catch(() => {})
        .finally(() => (reading = false));
    };
    const unwatch = this.log.watch(this.orgId, this.id, wake);
    const stop = () => {
      stopped = true;
      unwatch();
    };
    wake();
    return stop;
  }

  whenEnded(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const detach = this.attach(this.lastSeq, (c) => {
        if (c.chunk_type !== 'done') return;
        detach();
        resolve();
      });
    });
  }
}

function key(orgId: string, runId: string): string {
  return `${orgId}/${runId}`;
}
