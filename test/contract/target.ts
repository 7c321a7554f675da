// What the contract suites run against: a running Sable reached over HTTP, whichever shape it has
// (embedded in this process, or a cluster of `sable serve` processes). The suites see only this.
import type { Service } from '../../dist/control-plane/app.js';

/**
 * What only some targets can do. A test that needs one is skipped on the others and says why
 * where it is declared; keep this list short: everything else runs everywhere.
 */
export type Capability =
  /** The service lives in this process: the `Service` object the embedding code gets back. */
  | 'embedding'
  /** A second service of the same kind can be started with settings of its own (a provisioning delay). */
  | 'own-service';

/** Known when the suite is collected (a skip is decided then); the rest arrives in `beforeAll`. */
export interface TargetProfile {
  kind: 'embedded' | 'cluster';
  can: ReadonlySet<Capability>;
  /** The HTTP adapter the service was asked for (the route suite runs each embedded; a cluster's nodes use node:http). */
  adapter: 'node' | 'uws' | 'auto';
}

export interface ContractTarget {
  /** The base URL of the next call. A cluster rotates over its nodes, so a write through one node is read through another. */
  url(): string;
  /** Every base URL the target serves (a cluster's nodes), for what is kept per process (metrics). */
  urls(): string[];
  admin: string;
  /** The admin key's file, written 0600 on the first start (a cluster's first node writes it). */
  adminKeyFile: string;
  /** A new API key, usable through every URL the target hands out once this resolves. */
  newKey(org: string, role: 'admin' | 'member'): Promise<{ key: string; key_id: string }>;
  revokeKey(keyId: string): Promise<void>;
  /**
   * Resolves once a dataset made and provisioned (ensure-engine) serves through every URL. A setup
   * step only: a cluster places the dataset's shard replicas after the create answers and says 503
   * meanwhile; embedded, the engine is there once ensure-engine answered.
   */
  settle(datasetId: string, key: string): Promise<void>;
  /**
   * The files the target keeps its catalog in at rest (embedded: the control store's file; a
   * cluster: PostgreSQL's data directory, its log included), for what must never be there in the clear.
   */
  catalogFiles(): string[];
  /** The files uploaded originals are kept in (embedded: the upload folder; a cluster: its S3 server's directory). */
  uploadFiles(): string[];
  /** With 'embedding': the service object and its data directory. */
  embedded?: { service: Service; dir: string };
  /** With 'own-service': another service like this one with `flags` (loadConfig's) of its own. */
  startOwn?(flags: Record<string, string>): Promise<{ url: string; admin: string; close(): Promise<void> }>;
}
