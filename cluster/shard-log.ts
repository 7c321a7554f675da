/**
 * The per-shard ordered vector log on PostgreSQL (design: ../shared/design/cluster.md §3.3, §3.5):
 * appending a write (one entry per touched shard, in one transaction that takes the touched
 * shards' `shard_heads` row locks in shard order, so seqs are dense and commit in order per
 * shard), reading it, tailing it into an embedded dataset.
 *
 * Notifications go on one channel per dataset, `sable_log_` + the first 16 hex digits of
 * sha256(dataset), payload `shard:seq`: the design's `'shard_' || dataset || '_' || shard` would
 * pass PostgreSQL's 63-byte cap on identifiers for long dataset names (it is truncated with a
 * notice for LISTEN, refused by pg_notify), and dataset names may hold characters an identifier
 * cannot.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { shardOf } from '../catalog/placement/shard-of.js';
import type { Dataset } from '../engine/index.js';
import { withTransaction, type Pool } from '../outbound/postgres/pool.js';
import { decodeEntry, encodeEntry, type LogEntry } from './log-entry.js';
import type { Notifications } from './notifications.js';

export { decodeEntry, encodeEntry, type DeleteEntry, type LogEntry, type UpsertEntry } from './log-entry.js';

/** One row of vector_log. `entry` is null for a bulk entry (its body is in object storage under blobKey). */
export interface LogRecord {
  dataset: string;
  shard: number;
  seq: number;
  op: 'upsert' | 'delete' | 'bulk';
  entry: LogEntry | null;
  blobKey: string | null;
  requestId: string | null;
}

export interface Appended {
  shard: number;
  seq: number;
}

/** The NOTIFY channel of a dataset's log (27 bytes, whatever the dataset's name). */
export function logChannel(dataset: string): string {
  return 'sable_log_' + datasetTag(dataset);
}

/** A dataset's name as 16 hex digits of its sha256: fit for channel names and object keys, whatever the name holds. */
export function datasetTag(dataset: string): string {
  return createHash('sha256').update(dataset).digest('hex').slice(0, 16);
}

/** Creates the heads of shards 0 .. shards - 1 of a dataset (rows already there are kept). */
export async function createShards(pool: Pool, dataset: string, shards: number): Promise<void> {
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`a dataset has a whole number of shards, at least 1 (got ${shards})`);
  await pool.query(
    'INSERT INTO shard_heads (dataset, shard) SELECT $1, s FROM generate_series(0, $2::int - 1) AS s ON CONFLICT (dataset, shard) DO NOTHING',
    [dataset, shards],
  );
}

/** The write split by shard (ascending), each part an entry of its own. */
export function splitByShard(write: LogEntry, shards: number): { shard: number; entry: LogEntry }[] {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < write.ids.length; i++) {
    const s = shardOf(write.ids[i]!, shards);
    let g = groups.get(s);
    if (!g) groups.set(s, (g = []));
    g.push(i);
  }
  return [...groups.keys()]
    .sort((a, b) => a - b)
    .map((shard) => {
      const idx = groups.get(shard)!;
      const ids = Float64Array.from(idx, (i) => write.ids[i]!);
      if (write.op === 'delete') return { shard, entry: { op: 'delete', ids } };
      const { dim, vectors, metadata } = write;
      const part = new Float32Array(idx.length * dim);
      idx.forEach((i, k) => part.set(vectors.subarray(i * dim, (i + 1) * dim), k * dim));
      const entry: LogEntry = { op: 'upsert', ids, vectors: part, dim };
      if (metadata) entry.metadata = idx.map((i) => metadata[i] ?? null);
      return { shard, entry };
    });
}

class RequestSeen extends Error {}

/** One shard's part of a write: the entry itself, or the key of the object in storage that holds it (a bulk load's batch). */
export type LogPart = { shard: number; entry: LogEntry } | { shard: number; blobKey: string };

/**
 * Appends a write: one entry per touched shard, at the next seq of each, all in one transaction
 * that notifies `shard:seq` per entry on commit. A retry with the same request id appends nothing
 * and returns the seqs the first attempt got (the unique index on (dataset, shard, request_id)
 * refuses the insert; the transaction rolls back, so the heads are not bumped and seqs stay dense).
 */
export async function appendWrite(pool: Pool, dataset: string, shards: number, write: LogEntry, requestId: string): Promise<Appended[]> {
  return appendParts(pool, dataset, splitByShard(write, shards), requestId);
}

/** appendWrite's parts already split by shard (ascending), some of them in object storage. */
export async function appendParts(pool: Pool, dataset: string, parts: LogPart[], requestId: string): Promise<Appended[]> {
  if (parts.length === 0) return [];
  const channel = logChannel(dataset);
  try {
    return await withTransaction(pool, async (client) => {
      const out: Appended[] = [];
      for (const part of parts) {
        const { shard } = part;
        // Shard order: two writes touching the same shards take their locks in the same order (no deadlock).
        const head = await client.query<{ last_seq: string }>(
          'UPDATE shard_heads SET last_seq = last_seq + 1 WHERE dataset = $1 AND shard = $2 RETURNING last_seq',
          [dataset, shard],
        );
        if (head.rowCount !== 1) throw new Error(`shard ${shard} of dataset '${dataset}' has no head (createShards was not run)`);
        const seq = Number(head.rows[0]!.last_seq);
        try {
          await client.query('INSERT INTO vector_log (dataset, shard, seq, op, body, blob_key, request_id) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
            dataset,
            shard,
            seq,
            'entry' in part ? part.entry.op : 'bulk',
            'entry' in part ? Buffer.from(encodeEntry(part.entry)) : null,
            'entry' in part ? null : part.blobKey,
            requestId,
          ]);
        } catch (err) {
          const e = err as { code?: string; constraint?: string };
          if (e.code === '23505' && e.constraint === 'vector_log_request') throw new RequestSeen();
          throw err;
        }
        await client.query('SELECT pg_notify($1, $2)', [channel, `${shard}:${seq}`]);
        out.push({ shard, seq });
      }
      return out;
    });
  } catch (err) {
    if (!(err instanceof RequestSeen)) throw err;
    const { rows } = await pool.query<{ shard: number; seq: string }>(
      'SELECT shard, seq FROM vector_log WHERE dataset = $1 AND shard = ANY($2::int[]) AND request_id = $3 ORDER BY shard',
      [dataset, parts.map((p) => p.shard), requestId],
    );
    return rows.map((r) => ({ shard: r.shard, seq: Number(r.seq) }));
  }
}

/** Entries of a shard with seq > afterSeq, in seq order, at most `limit`. */
export async function readLog(pool: Pool | pg.ClientBase, dataset: string, shard: number, afterSeq: number, limit = 1000): Promise<LogRecord[]> {
  const { rows } = await pool.query<{ seq: string; op: LogRecord['op']; body: Buffer | null; blob_key: string | null; request_id: string | null }>(
    'SELECT seq, op, body, blob_key, request_id FROM vector_log WHERE dataset = $1 AND shard = $2 AND seq > $3 ORDER BY seq LIMIT $4',
    [dataset, shard, afterSeq, limit],
  );
  return rows.map((r) => ({
    dataset,
    shard,
    seq: Number(r.seq),
    op: r.op,
    entry: r.body ? decodeEntry(r.body) : null,
    blobKey: r.blob_key,
    requestId: r.request_id,
  }));
}

/**
 * Applies one entry to an embedded dataset: an upsert or a delete by id. Answers the rows
 * written, or for a delete the ids that were there (the count the API answers).
 */
export async function applyEntry(dataset: Dataset, entry: LogEntry): Promise<number> {
  if (entry.op === 'upsert') {
    if (entry.dim !== dataset.dim) throw new Error(`log entry of dim ${entry.dim} for dataset '${dataset.name}' of dim ${dataset.dim}`);
    // Metadata values are the engine's scalars: they were validated before the write was logged.
    await dataset.upsert(entry.ids, entry.vectors, entry.metadata as Parameters<Dataset['upsert']>[2]);
    return entry.ids.length;
  }
  return dataset.delete(Array.from(entry.ids));
}

export interface LogTailerOptions {
  pool: Pool;
  /** The node's LISTEN connection. */
  notifications: Notifications;
  dataset: string;
  shard: number;
  /** The last seq already applied: the tailer delivers fromSeq + 1 onwards (0: the whole log). */
  fromSeq: number;
  apply: (record: LogRecord) => Promise<void>;
  /** The fallback poll, for a notification missed (default 1000 ms, the design's backstop). */
  pollMs?: number;
  /** Entries read per query (default 500). */
  batch?: number;
}

/**
 * Delivers every entry of one shard's log, in seq order, exactly once, to `apply`: woken by
 * NOTIFY on the dataset's channel, and by a poll every pollMs. It stops with an error (in
 * `done`, and `error`) when `apply` throws or when it sees a gap in the seqs (the row-lock append
 * makes one impossible; if one shows, applying past it would lose the write). Reads that fail
 * (the database away) are retried at the next wake-up.
 */
export class LogTailer {
  private appliedSeq: number;
  private readonly channel: string;
  private stopped = false;
  private unsubscribe: (() => void) | null = null;
  private wake: (() => void) | null = null;
  private pending = false;
  private timer: NodeJS.Timeout | null = null;
  private waiters: { seq: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  /** Why the tailer stopped on its own (a gap, a failed apply). */
  error: Error | null = null;
  /** Resolves when the tailer has stopped (by stop()), rejects when it stopped on an error. */
  readonly done: Promise<void>;

  constructor(private readonly opts: LogTailerOptions) {
    this.appliedSeq = opts.fromSeq;
    this.channel = logChannel(opts.dataset);
    this.done = this.run();
    this.done.catch(() => {}); // observed through `error` / waitFor as well
  }

  /** Whether stop() was called. */
  get halted(): boolean {
    return this.stopped;
  }

  /** The last seq applied. */
  get applied(): number {
    return this.appliedSeq;
  }

  /** Resolves once `seq` is applied (rejects when the tailer stops first, or after timeoutMs). */
  waitFor(seq: number, timeoutMs = 10_000): Promise<void> {
    if (this.appliedSeq >= seq) return Promise.resolve();
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      const w = { seq, resolve, reject };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`tailer of shard ${this.opts.shard} did not reach seq ${seq} in ${timeoutMs} ms (at ${this.appliedSeq})`));
      }, timeoutMs);
      w.resolve = () => (clearTimeout(t), resolve());
      w.reject = (e) => (clearTimeout(t), reject(e));
      this.waiters.push(w);
    });
  }

  /** Stops after the entry being applied, closes the LISTEN connection; resolves when done. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await this.done.catch(() => {});
  }

  private poke(): void {
    this.pending = true;
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Subscribes once, before the first read: a write committed after a read still wakes us. */
  private async listen(): Promise<void> {
    if (this.unsubscribe || this.stopped) return;
    this.unsubscribe = await this.opts.notifications.subscribe(this.channel, (payload) => {
      if (payload === '') return this.poke(); // a reconnect: what was notified meanwhile is lost
      const [shard, seq] = payload.split(':').map(Number);
      if (shard === this.opts.shard && seq! > this.appliedSeq) this.poke();
    });
  }

  private async run(): Promise<void> {
    const { pool, dataset, shard, apply } = this.opts;
    const pollMs = this.opts.pollMs ?? 1000;
    const batch = this.opts.batch ?? 500;
    this.timer = setInterval(() => {
      void this.opts.notifications.connect();
      this.poke();
    }, pollMs);
    try {
      while (!this.stopped) {
        await this.listen();
        this.pending = false;
        let records: LogRecord[];
        try {
          records = await readLog(pool, dataset, shard, this.appliedSeq, batch);
        } catch {
          records = []; // the database away: retried at the next wake-up
        }
        for (const record of records) {
          if (this.stopped) break;
          if (record.seq !== this.appliedSeq + 1) {
            throw new Error(`gap in the log of shard ${shard} of '${dataset}': seq ${record.seq} follows ${this.appliedSeq}`);
          }
          await apply(record);
          this.appliedSeq = record.seq;
          this.settleWaiters();
        }
        if (records.length === batch || this.pending || this.stopped) continue; // more to read, or woken meanwhile
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } catch (err) {
      this.error = err as Error;
      for (const w of this.waiters.splice(0)) w.reject(this.error);
      throw err;
    } finally {
      if (this.timer) clearInterval(this.timer);
      this.unsubscribe?.();
      this.unsubscribe = null;
      const why = this.error ?? new Error(`tailer of shard ${shard} stopped at seq ${this.appliedSeq}`);
      for (const w of this.waiters.splice(0)) w.reject(why);
    }
  }

  private settleWaiters(): void {
    if (this.waiters.length === 0) return;
    const keep = [];
    for (const w of this.waiters) {
      if (this.appliedSeq >= w.seq) w.resolve();
      else keep.push(w);
    }
    this.waiters = keep;
  }
}
