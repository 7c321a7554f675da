/**
 * Migration 0001: the core of cluster mode (docs: ../shared/design/cluster.md §3.2, §3.3).
 * Membership (`nodes`, DB-clock leases), named leader leases with fencing epochs (`leases`), the
 * shard map (`shard_replicas`), and the per-shard ordered vector log (`shard_heads` +
 * `vector_log`). A write takes the shard's `shard_heads` row lock (UPDATE ... RETURNING last_seq)
 * and inserts its entry at that seq in the same transaction, so seqs are dense and commit in
 * order per shard. Shipped SQL never changes once released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
-- Processes of the cluster. A node heartbeats lease_until = now() + interval on the database's
-- clock; a node whose lease_until is past is dead to the controller.
CREATE TABLE nodes (
  id          text PRIMARY KEY,
  address     text NOT NULL,                    -- host:port of its internal API
  roles       text[] NOT NULL DEFAULT '{}',     -- api, search, worker
  zone        text,                             -- placement prefers distinct zones
  capacity_bytes bigint,                        -- declared memory for shard replicas
  started_at  timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz NOT NULL
);

-- Named leases (the controller's, ...). Taking one bumps epoch; every write made under it
-- carries WHERE epoch = the holder's epoch (fencing).
CREATE TABLE leases (
  name        text PRIMARY KEY,
  holder      text,
  epoch       bigint NOT NULL DEFAULT 0,
  lease_until timestamptz NOT NULL DEFAULT '-infinity'
);

-- One row per shard of a dataset (dataset = the dataset's id), created with the dataset: the
-- head of its log. Its row lock orders the shard's writes.
CREATE TABLE shard_heads (
  dataset  text NOT NULL,
  shard    integer NOT NULL CHECK (shard >= 0),
  last_seq bigint NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
  PRIMARY KEY (dataset, shard)
);

-- The shard's ordered write log. body is the encoded entry, or blob_key names it in object
-- storage (bulk loads). request_id makes retries idempotent: unique per shard, since one request
-- that touches several shards writes one entry in each.
CREATE TABLE vector_log (
  dataset    text NOT NULL,
  shard      integer NOT NULL,
  seq        bigint NOT NULL CHECK (seq >= 1),
  op         text NOT NULL CHECK (op IN ('upsert', 'delete', 'bulk')),
  body       bytea,
  blob_key   text,
  request_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dataset, shard, seq),
  FOREIGN KEY (dataset, shard) REFERENCES shard_heads (dataset, shard),
  CHECK ((body IS NULL) <> (blob_key IS NULL))
);
CREATE UNIQUE INDEX vector_log_request ON vector_log (dataset, shard, request_id) WHERE request_id IS NOT NULL;

-- The shard map: which node holds a replica of which shard, in what state, written by the
-- controller under its lease epoch. Only 'active' replicas serve reads and count for write_concern.
CREATE TABLE shard_replicas (
  dataset    text NOT NULL,
  shard      integer NOT NULL,
  node       text NOT NULL REFERENCES nodes (id),
  state      text NOT NULL CHECK (state IN ('initializing', 'active', 'stale', 'dropped')),
  epoch      bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dataset, shard, node),
  FOREIGN KEY (dataset, shard) REFERENCES shard_heads (dataset, shard)
);
CREATE INDEX shard_replicas_node ON shard_replicas (node);
`;

const migration: Migration = { version: 1, name: 'cluster_core', sql };
export default migration;
