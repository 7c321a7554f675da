/**
 * The control plane's records in LMDB (`control.mdb` in the data directory): organizations, API
 * keys (hashes only), dataset records and string ids. LMDB allows several processes, so
 * `sable keys create` works while the service runs on the same directory.
 *
 * In cluster mode a `CatalogJournal` is attached: control.mdb becomes this node's cache of a
 * catalog whose record is a log in PostgreSQL (cluster/catalog-log.ts). Every write transaction
 * on a replicated database is then ordered with every other node's by the journal, its changes
 * captured as they are made and appended to the log; reads stay local and synchronous. The job
 * queue's databases stay local to the node (cluster mode queues jobs in PostgreSQL instead).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import type { DatasetRecord } from './datasets/record.js';
import { DecodedCache } from './decoded-cache.js';

export interface OrgRecord {
  id: string;
  name: string;
  created_at: string;
}

export type Role = 'admin' | 'member';

export interface KeyRecord {
  key_id: string;
  org_id: string;
  role: Role;
  /** First characters of the key, to recognise it in lists. */
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

/**
 * control.mdb's layout: every sub-database of every record kind, named once (the names are on
 * disk: renaming one loses its records). Each layer opens its own through `ControlStore.open`.
 */
export const CONTROL_DATABASES = {
  orgs: 'orgs',
  keys: 'keys',
  datasets: 'datasets',
  externalIds: 'external_ids',
  secrets: 'secrets',
  documents: 'documents',
  documentItems: 'document_items',
  sources: 'sources',
  schedules: 'schedules',
  connections: 'connections',
  connectionStates: 'connection_states',
  jobs: 'jobs',
  jobFiles: 'job_files',
  jobIdempotency: 'job_idempotency',
  sessions: 'sessions',
  sessionMessages: 'session_messages',
  sessionEvents: 'session_events',
  endedDashboardSessions: 'ended_dashboard_sessions',
  catalogMeta: 'catalog_meta',
  runs: 'runs',
  runChunks: 'run_chunks',
} as const;
export type ControlDatabase = keyof typeof CONTROL_DATABASES;

/**
 * Databases that are this node's own, never replicated: the embedded job queue's, where the
 * catalog journal keeps how far this node's copy has applied the log, and the embedded answer
 * runs (answer/runs/local-run-log.ts; a cluster records its runs in PostgreSQL).
 */
export const NODE_LOCAL_DATABASES: ReadonlySet<ControlDatabase> = new Set(['jobs', 'jobFiles', 'jobIdempotency', 'catalogMeta', 'runs', 'runChunks']);

/** lmdb-js's put and remove, as the wrappers call them (their overloads differ only in options). */
type LmdbWrite = (this: Database | void, ...args: unknown[]) => Promise<boolean>;

/** One change of a replicated database: a put (value) or a removal (value undefined). */
export interface CatalogChange {
  db: ControlDatabase;
  key: Key;
  value?: unknown;
}

/** A change as a transaction captured it: with the value it replaced, to undo it. */
export interface CapturedChange extends CatalogChange {
  prior?: unknown;
}

/**
 * Orders this node's catalog transactions with every other node's (cluster mode). `commit` calls
 * `run` once the node's copy is caught up and no other node can commit before it; `run` makes the
 * local LMDB transaction and answers what it changed, which the journal records before it
 * resolves. `seq` is the position the changes will take in the log.
 */
export interface CatalogJournal {
  commit<T>(run: (seq: number) => Promise<{ result: T; changes: CapturedChange[] }>): Promise<T>;
  /** Called inside the local LMDB transaction of `run` when it changed something. */
  staged(seq: number, changes: readonly CapturedChange[]): void;
}

export class ControlStore {
  readonly root: RootDatabase;
  readonly orgs: Database<OrgRecord, string>;
  /** sha256(key) -> key record */
  readonly keys: Database<KeyRecord, string>;
  readonly datasets: Database<DatasetRecord, string>;
  /** [dataset id, integer id] -> the string id it was mapped from */
  readonly externalIds: Database<string, (string | number)[]>;
  /** Reads of keys and dataset records on the request path (frozen values). */
  readonly keysRead: DecodedCache<KeyRecord, string>;
  readonly datasetsRead: DecodedCache<DatasetRecord, string>;
  private journal: CatalogJournal | null = null;
  /** The changes of the journaled transaction running now (its callback is synchronous). */
  private capturing: CapturedChange[] | null = null;
  /** Replicated databases by name, with their own put and remove (that skip the capture). */
  private readonly replicated = new Map<ControlDatabase, { db: Database; put: LmdbWrite; remove: LmdbWrite }>();

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.root = open({ path: join(dataDir, 'control.mdb'), maxDbs: 64, compression: false });
    this.orgs = this.open('orgs');
    this.keys = this.open('keys');
    this.datasets = this.open('datasets');
    this.externalIds = this.open('externalIds');
    this.keysRead = new DecodedCache(this.keys);
    this.datasetsRead = new DecodedCache(this.datasets);
  }

  /** One sub-database of the layout above (the same object for each call with one name). */
  open<V, K extends Key>(name: ControlDatabase): Database<V, K> {
    const known = this.replicated.get(name);
    if (known) return known.db as unknown as Database<V, K>;
    const db = this.root.openDB<V, K>({ name: CONTROL_DATABASES[name] });
    if (!NODE_LOCAL_DATABASES.has(name)) this.captureWrites(name, db as unknown as Database);
    return db;
  }

  /**
   * A write transaction: `fn` runs synchronously inside it. With a journal attached, it is also a
   * catalog transaction of the cluster (ordered, logged); without, a plain LMDB transaction.
   */
  write<T>(fn: () => T): Promise<T> {
    const journal = this.journal;
    if (!journal) return this.root.transaction(fn);
    return journal.commit(async (seq) => {
      const changes: CapturedChange[] = [];
      const result = await this.root.transaction(() => {
        this.capturing = changes;
        try {
          const r = fn();
          if (changes.length > 0) journal.staged(seq, changes);
          return r;
        } finally {
          this.capturing = null;
        }
      });
      return { result, changes };
    });
  }

  /** A write transaction on node-local databases only (the job queue's): never journaled. */
  writeLocal<T>(fn: () => T): Promise<T> {
    return this.root.transaction(fn);
  }

  /** Makes this store a node's cache of the cluster catalog (see the file's header). */
  attachJournal(journal: CatalogJournal): void {
    this.journal = journal;
  }

  /** Replicated databases, by name: what a journal replays into and rebuilds. */
  replicatedDatabases(): ControlDatabase[] {
    for (const name of Object.keys(CONTROL_DATABASES) as ControlDatabase[]) if (!NODE_LOCAL_DATABASES.has(name)) this.open(name);
    return [...this.replicated.keys()];
  }

  /**
   * Applies changes that another node committed (or that a rebuild replays), with `also` (the
   * journal's own bookkeeping) in the same LMDB transaction; nothing is captured.
   */
  applyReplicated(changes: readonly CatalogChange[], also: () => void = () => {}): Promise<void> {
    return this.root.transaction(() => {
      for (const c of changes) {
        const target = this.replicated.get(c.db) ?? (this.open(c.db), this.replicated.get(c.db));
        if (!target) continue; // a node-local database never arrives here
        if (c.value === undefined) void target.remove.call(target.db, c.key);
        else void target.put.call(target.db, c.key, c.value);
      }
      also();
    });
  }

  /** Every record of the replicated databases, as puts (a checkpoint of the catalog). */
  dumpReplicated(): CatalogChange[] {
    const out: CatalogChange[] = [];
    for (const name of this.replicatedDatabases()) {
      const { db } = this.replicated.get(name)!;
      for (const { key, value } of db.getRange({ snapshot: false })) out.push({ db: name, key, value });
    }
    return out;
  }

  /** Removes every record of the replicated databases (before a replay from the log). */
  clearReplicated(): Promise<void> {
    const names = this.replicatedDatabases();
    return this.root.transaction(() => {
      for (const name of names) {
        const { db, remove } = this.replicated.get(name)!;
        for (const key of db.getKeys({ snapshot: false })) void remove.call(db, key);
      }
    });
  }

  /**
   * Wraps a replicated database's put and remove: inside a journaled transaction each change is
   * recorded as it is made; outside one (a lone put) it becomes a transaction of its own, so
   * every change reaches the journal. Without a journal they are LMDB's, untouched.
   */
  private captureWrites(name: ControlDatabase, db: Database): void {
    const put = db.put as LmdbWrite;
    const remove = db.remove as LmdbWrite;
    this.replicated.set(name, { db, put, remove });
    const wrappedPut: LmdbWrite = (key, value, ...rest) => {
      if (!this.journal) return put.call(db, key, value, ...rest);
      if (this.capturing) {
        this.capturing.push({ db: name, key: key as Key, value, prior: db.get(key as Key) });
        return put.call(db, key, value, ...rest);
      }
      return this.write(() => (void wrappedPut(key, value), true));
    };
    const wrappedRemove: LmdbWrite = (key, ...rest) => {
      if (!this.journal) return remove.call(db, key, ...rest);
      if (rest.length > 0) throw new Error('a replicated catalog removes whole keys only');
      if (this.capturing) {
        // Removing what is not there changes nothing: nothing to log.
        const prior = db.get(key as Key);
        if (prior === undefined) return Promise.resolve(false);
        this.capturing.push({ db: name, key: key as Key, prior });
        return remove.call(db, key);
      }
      return this.write(() => {
        const existed = db.doesExist(key as Key);
        void wrappedRemove(key);
        return existed;
      });
    };
    db.put = wrappedPut as Database['put'];
    db.remove = wrappedRemove as Database['remove'];
  }

  close(): Promise<void> {
    return this.root.close();
  }
}
