/**
 * Migration 0003: the replicated catalog and the datasets' shard settings (docs:
 * ../shared/design/cluster.md §2 "Who owns what", §3.2, §3.3).
 *
 * `catalog_log` is the catalog's system of record in cluster mode: every committed change to a
 * control-store record (orgs, keys, datasets, sources, ...) as one entry per local transaction,
 * in `seq` order. A writer holds the `catalog_head` row lock from before it reads (to catch up)
 * until its entry commits, so catalog transactions are serialized across nodes and each node's
 * control.mdb is a cache rebuilt by replaying the log.
 *
 * `cluster_datasets` fixes a dataset's shard count and replication factor at creation.
 * `shard_replicas.applied_seq` is what a replica has applied of its shard's log, as it last
 * reported it (the controller and routers read it; the replica's own memory is the truth).
 * Shipped SQL never changes once released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
CREATE TABLE catalog_head (
  id       integer PRIMARY KEY CHECK (id = 1),
  last_seq bigint NOT NULL DEFAULT 0 CHECK (last_seq >= 0)
);
INSERT INTO catalog_head (id, last_seq) VALUES (1, 0);

CREATE TABLE catalog_log (
  seq        bigint PRIMARY KEY CHECK (seq >= 1),
  node       text NOT NULL,
  changes    bytea NOT NULL,               -- msgpack: [[database, key, value | undefined], ...]
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cluster_datasets (
  dataset    text PRIMARY KEY,
  shards     integer NOT NULL CHECK (shards BETWEEN 1 AND 256),
  replicas   integer NOT NULL CHECK (replicas BETWEEN 1 AND 16),
  created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE shard_replicas ADD COLUMN applied_seq bigint NOT NULL DEFAULT 0;
`;

const migration: Migration = { version: 3, name: 'cluster_catalog', sql };
export default migration;
