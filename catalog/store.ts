/**
 * The control plane's records in LMDB (`control.mdb` in the data directory): organizations, API
 * keys (hashes only), dataset records and string ids. LMDB allows several processes, so
 * `sable keys create` works while the service runs on the same directory.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
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
    this.orgs = this.root.openDB({ name: 'orgs' });
    this.keys = this.root.openDB({ name: 'keys' });
    this.datasets = this.root.openDB({ name: 'datasets' });
    this.externalIds = this.root.openDB({ name: 'external_ids' });
    this.keysRead = new DecodedCache(this.keys);
    this.datasetsRead = new DecodedCache(this.datasets);
  }

  write<T>(fn: () => T): Promise<T> {
    return this.root.transaction(fn);
  }

  close(): Promise<void> {
    return this.root.close();
  }
}
