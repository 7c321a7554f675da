/**
 * The catalog of cluster mode (design: ../shared/design/cluster.md §2 "Who owns what"): its
 * system of record is `catalog_log` in PostgreSQL (migration 0003), one entry per catalog
 * transaction, and each node's control.mdb is a cache that replays it. Reads stay local and
 * synchronous, as the request path needs (a key is looked up on every request); writes are
 * serialized across the cluster.
 *
 * A catalog transaction holds the `catalog_head` row lock from before it catches up until its
 * entry commits, so it validates against every earlier transaction of every node (a dataset name
 * taken on another node is seen) and takes the next seq. Its LMDB transaction commits first, with
 * a `pending` mark that holds its seq and the values it replaced; the log entry then commits,
 * and the mark is cleared. When the log's commit fails, the node's copy holds a change the
 * cluster does not: the replaced values are put back at once, without the database. When the
 * process died in between, the next start finds the mark and asks the log whether this node's
 * entry took its seq: kept if it did, undone if not.
 *
 * Other nodes' entries arrive by NOTIFY on `sable_catalog` and a poll (the backstop for a lost
 * notification), applied in seq order under the same exclusion as local transactions.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { Packr } from 'msgpackr';
import type { Database } from 'lmdb';
import type { CapturedChange, CatalogChange, CatalogJournal, ControlDatabase, ControlStore } from '../catalog/store.js';
import { SableError } from '../errors/codes.js';
import type { Pool, PoolClient } from '../outbound/postgres/pool.js';
import type { Notifications } from './notifications.js';
import { Coalesced } from './coalesced.js';

export const CATALOG_CHANNEL = 'sable_catalog';

/** Plain msgpack: no shared structures, so any node (any version) decodes an entry alone. */
const codec = new Packr({ useRecords: false, structuredClone: false });

type WireChange = [db: ControlDatabase, key: unknown, removed: boolean, value: unknown];

export function encodeChanges(changes: readonly CatalogChange[]): Buffer {
  return codec.pack(changes.map((c): WireChange => [c.db, c.key, c.value === undefined, c.value ?? null]));
}

export function decodeChanges(bytes: Uint8Array): CatalogChange[] {
  return (codec.unpack(bytes) as WireChange[]).map(([db, key, removed, value]) => (removed ? { db, key: key as CatalogChange['key'] } : { db, key: key as CatalogChange['key'], value }));
}

export interface CatalogLogOptions {
  pool: Pool;
  notifications: Notifications;
  nodeId: string;
  /** The backstop poll for a missed notification (default 1000 ms). */
  pollMs?: number;
  /** Log entries past the newest checkpoint before a node takes the next one (default 10,000). */
  checkpointEvery?: number;
}

/** Any fixed bigint: taking a checkpoint is one node's work at a time ("sable" + 6). */
const CHECKPOINT_LOCK_KEY = '0x5ab1e0006';

/** What a transaction changed, as changes that put its replaced values back (newest first). */
function undoOf(changes: readonly CapturedChange[]): CatalogChange[] {
  return changes
    .slice()
    .reverse()
    .map((c) => (c.prior === undefined ? { db: c.db, key: c.key } : { db: c.db, key: c.key, value: c.prior }));
}

interface PendingMark {
  seq: number;
  /** encodeChanges of the undo. */
  undo: Uint8Array;
}

export type CatalogListener = (changes: readonly CatalogChange[], origin: 'local' | 'remote') => void;

export class CatalogLog implements CatalogJournal {
  private readonly meta: Database<number | PendingMark, string>;
  private appliedSeq = 0;
  /** Catalog transactions and replays of this node, one at a time. */
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly listeners: CatalogListener[] = [];
  private stopped = false;

  constructor(
    private readonly store: ControlStore,
    private readonly opts: CatalogLogOptions,
  ) {
    this.meta = store.open<number | PendingMark, string>('catalogMeta');
  }

  /** The last seq this node's copy has applied. */
  get applied(): number {
    return this.appliedSeq;
  }

  /** Called after changes are applied here, a node's own or another's (in seq order). */
  onChange(listener: CatalogListener): void {
    this.listeners.push(listener);
  }

  /**
   * Attaches the journal to the store, brings the copy up to the log (rebuilding it when a
   * transaction was cut between its two commits, or when the copy is of another database), and
   * follows the log from then on.
   */
  async start(): Promise<void> {
    this.appliedSeq = (this.meta.get('applied') as number | undefined) ?? 0;
    const head = await this.head(this.opts.pool);
    this.store.attachJournal(this);
    await this.exclusive(async () => {
      const pending = this.meta.get('pending') as PendingMark | undefined;
      if (pending) await this.settlePending(pending);
      // A copy ahead of the log is a copy of another cluster's database: started over.
      if (this.appliedSeq > head) await this.rebuild();
      else await this.catchUp(this.opts.pool);
    });
    this.unsubscribe = await this.opts.notifications.subscribe(CATALOG_CHANNEL, () => this.poke());
    let polls = 0;
    this.timer = setInterval(() => {
      void this.opts.notifications.connect();
      this.poke();
      // Every minute or so, one node checkpoints a log grown long enough.
      if (++polls % 60 === 0) void this.checkpoint().catch(() => {});
    }, this.opts.pollMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.chain.catch(() => {});
  }

  /**
   * Takes a checkpoint when the log holds `checkpointEvery` entries past the newest one: this
   * node's copy, caught up, written whole as of its seq; then the entries it covers are deleted
   * (and older checkpoints). One node at a time (an advisory lock); answers the seq taken, or null.
   */
  async checkpoint(force = false): Promise<number | null> {
    const every = this.opts.checkpointEvery ?? 10_000;
    return this.exclusive(async () => {
      const client = await this.opts.pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS locked', [BigInt(CHECKPOINT_LOCK_KEY).toString()]);
        if (!rows[0]!.locked) return await rollback(client, null);
        const newest = await client.query<{ seq: string | null }>('SELECT max(seq) AS seq FROM catalog_checkpoints');
        await this.catchUp(client);
        const since = this.appliedSeq - Number(newest.rows[0]!.seq ?? 0);
        if (since <= 0 || (!force && since < every)) return await rollback(client, null);
        const seq = this.appliedSeq;
        const body = gzipSync(encodeChanges(this.store.dumpReplicated()));
        await client.query('INSERT INTO catalog_checkpoints (seq, node, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [seq, this.opts.nodeId, body]);
        await client.query('DELETE FROM catalog_log WHERE seq <= $1', [seq]);
        await client.query('DELETE FROM catalog_checkpoints WHERE seq < $1', [seq]);
        await client.query('COMMIT');
        return seq;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    });
  }

  /** Applies the log up to its head now (read-your-writes of another node's transactions). */
  sync(): Promise<void> {
    // Shared: every caller (requests' barrier, scheduler ticks, settings reads) waits for at most
    // the catch-up in flight and one more, never for a queue of them (a node cut from the
    // database would queue one per caller, each waiting out the statement bound).
    return this.catchUps.next();
  }

  /**
   * Resolves once the copy holds every change committed before the call: the read barrier each
   * request passes, so a client reads its own writes whichever node it reaches next. Calls are
   * coalesced: one that arrives while a catch-up is under way waits for the next one, which
   * serves every call that arrived meanwhile; so there is at most one in flight and one queued.
   * Rejects with vecstack_router_failed (503) when the database cannot be reached.
   */
  fresh(): Promise<void> {
    return this.sync().catch((err: unknown) => {
      throw err instanceof SableError ? err : unavailable(err);
    });
  }

  staged(seq: number, changes: readonly CapturedChange[]): void {
    void this.meta.put('pending', { seq, undo: encodeChanges(undoOf(changes)) });
  }

  commit<T>(run: (seq: number) => Promise<{ result: T; changes: CapturedChange[] }>): Promise<T> {
    return this.exclusive(async () => {
      let client: PoolClient;
      try {
        client = await this.opts.pool.connect();
      } catch (err) {
        throw unavailable(err);
      }
      let staged: CapturedChange[] | null = null;
      let running = false;
      try {
        await client.query('BEGIN');
        const seq = (await this.head(client, true)) + 1;
        await this.catchUp(client);
        running = true;
        const { result, changes } = await run(seq);
        running = false;
        if (changes.length === 0) {
          await client.query('ROLLBACK');
          return result;
        }
        staged = changes;
        await client.query('INSERT INTO catalog_log (seq, node, changes) VALUES ($1, $2, $3)', [seq, this.opts.nodeId, encodeChanges(changes)]);
        await client.query('UPDATE catalog_head SET last_seq = $1 WHERE id = 1', [seq]);
        await client.query('SELECT pg_notify($1, $2)', [CATALOG_CHANNEL, String(seq)]);
        await client.query('COMMIT');
        staged = null;
        await this.store.applyReplicated([], () => {
          void this.meta.put('applied', seq);
          void this.meta.remove('pending');
        });
        this.appliedSeq = seq;
        this.emit(changes, 'local');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        // The local transaction committed and the log's did not: its changes are undone. Had
        // the commit gone through with its answer lost, the entry comes back by the log.
        if (staged) await this.store.applyReplicated(undoOf(staged), () => void this.meta.remove('pending'));
        // What the transaction's own code threw is its answer (dataset_exists, a bug); what the
        // database did is a cluster that cannot take the write now.
        throw running || err instanceof SableError ? err : unavailable(err);
      } finally {
        client.release();
      }
    });
  }

  private poke(): void {
    if (this.stopped) return;
    void this.sync().catch(() => {
      // The database away: the next poll or notification tries again.
    });
  }

  private readonly catchUps = new Coalesced(() => this.exclusive(() => this.catchUp(this.opts.pool)));

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => {});
    return next;
  }

  private async head(q: Pool | PoolClient, lock = false): Promise<number> {
    const { rows } = await q.query<{ last_seq: string }>(`SELECT last_seq FROM catalog_head WHERE id = 1${lock ? ' FOR UPDATE' : ''}`);
    return Number(rows[0]!.last_seq);
  }

  /**
   * Applies every entry after the applied seq, in order, each in one LMDB transaction. When the
   * entries this copy needs next were deleted under a checkpoint, the copy starts over from it.
   */
  private async catchUp(q: Pool | PoolClient): Promise<void> {
    for (;;) {
      // One query, the one every request's read barrier costs: the entries past the copy, and the
      // newest checkpoint (the entries it covers are deleted: a copy behind it loads it instead).
      const { rows: read } = await q.query<{ seq: string | null; changes: Buffer | null; checkpoint: string | null }>(
        `SELECT l.seq, l.changes, c.checkpoint FROM (SELECT max(seq) AS checkpoint FROM catalog_checkpoints) AS c
           LEFT JOIN LATERAL (SELECT seq, changes FROM catalog_log WHERE seq > $1 ORDER BY seq LIMIT 200) AS l ON true ORDER BY l.seq`,
        [this.appliedSeq],
      );
      const checkpoint = Number(read[0]?.checkpoint ?? 0);
      const rows = read.filter((r): r is { seq: string; changes: Buffer; checkpoint: string | null } => r.seq !== null);
      if (checkpoint > this.appliedSeq && (rows.length === 0 || Number(rows[0]!.seq) !== this.appliedSeq + 1) && (await this.loadCheckpoint(q))) continue;
      for (const row of rows) {
        const seq = Number(row.seq);
        // Entries commit in seq order under the head lock, and only a checkpoint deletes them: a
        // gap past the newest checkpoint means the log was tampered with.
        if (seq !== this.appliedSeq + 1) throw new SableError('internal', `gap in the catalog log: seq ${seq} follows ${this.appliedSeq}`);
        const changes = decodeChanges(row.changes);
        await this.store.applyReplicated(changes, () => void this.meta.put('applied', seq));
        this.appliedSeq = seq;
        this.emit(changes, 'remote');
      }
      if (rows.length < 200) return;
    }
  }

  /** After a process died between its two commits: keeps its changes or undoes them. */
  private async settlePending(pending: PendingMark): Promise<void> {
    const { rows } = await this.opts.pool.query<{ node: string }>('SELECT node FROM catalog_log WHERE seq = $1', [pending.seq]);
    const committed = rows[0]?.node === this.opts.nodeId && pending.seq === this.appliedSeq + 1;
    if (committed) {
      await this.store.applyReplicated([], () => {
        void this.meta.put('applied', pending.seq);
        void this.meta.remove('pending');
      });
      this.appliedSeq = pending.seq;
    } else {
      await this.store.applyReplicated(decodeChanges(pending.undo), () => void this.meta.remove('pending'));
    }
  }

  /** Empties the copy and replays the whole log (from the newest checkpoint). */
  private async rebuild(): Promise<void> {
    await this.store.clearReplicated();
    await this.store.applyReplicated([], () => {
      void this.meta.put('applied', 0);
      void this.meta.remove('pending');
    });
    this.appliedSeq = 0;
    await this.catchUp(this.opts.pool);
  }

  /** Replaces the copy by the newest checkpoint past it; false when there is none. */
  private async loadCheckpoint(q: Pool | PoolClient): Promise<boolean> {
    const { rows } = await q.query<{ seq: string; body: Buffer }>('SELECT seq, body FROM catalog_checkpoints WHERE seq > $1 ORDER BY seq DESC LIMIT 1', [this.appliedSeq]);
    const row = rows[0];
    if (!row) return false;
    const seq = Number(row.seq);
    const records = decodeChanges(gunzipSync(row.body));
    await this.store.clearReplicated();
    await this.store.applyReplicated(records, () => {
      void this.meta.put('applied', seq);
      void this.meta.remove('pending');
    });
    this.appliedSeq = seq;
    this.emit(records, 'remote');
    return true;
  }

  private emit(changes: readonly CatalogChange[], origin: 'local' | 'remote'): void {
    for (const l of this.listeners) {
      try {
        l(changes, origin);
      } catch (err) {
        console.error('sable: a catalog listener failed:', err);
      }
    }
  }
}

async function rollback<T>(client: PoolClient, value: T): Promise<T> {
  await client.query('ROLLBACK');
  return value;
}

function unavailable(err: unknown): SableError {
  return new SableError('vecstack_router_failed', `the cluster database cannot be reached: ${(err as Error).message}`, { retryAfterSeconds: 1 });
}
