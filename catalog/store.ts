/**
 * The control plane's records in LMDB (`control.mdb` in the data directory): organizations, API
 * keys (hashes only), dataset records and string ids. LMDB allows several processes, so
 * `sable keys create` works while the service runs on the same directory.
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
} as const;
export type ControlDatabase = keyof typeof CONTROL_DATABASES;

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

  /** One sub-database of the layout above. */
  open<V, K extends Key>(db: ControlDatabase): Database<V, K> {
    return this.root.openDB<V, K>({ name: CONTROL_DATABASES[db] });
  }

  write<T>(fn: () => T): Promise<T> {
    return this.root.transaction(fn);
  }

  close(): Promise<void> {
    return this.root.close();
  }
}
