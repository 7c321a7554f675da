/**
 * Migration 0007: snapshots of shard replicas in object storage (design: ../shared/design/cluster.md
 * §3.5). A row names an object holding every live row of one shard as of `seq` of its log; a
 * new replica loads the newest and applies the log after it. Once a shard has two, the log
 * entries up to the older one's seq are deleted with the snapshots before it, so the log stays
 * as long as the writes since the second-newest snapshot.
 * Shipped SQL never changes once released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
CREATE TABLE shard_snapshots (
  dataset    text NOT NULL,
  shard      integer NOT NULL,
  seq        bigint NOT NULL CHECK (seq >= 1),
  object_key text NOT NULL UNIQUE,
  rows       bigint NOT NULL CHECK (rows >= 0),
  bytes      bigint NOT NULL CHECK (bytes >= 0),
  sha256     text NOT NULL,
  node       text NOT NULL,
  taken_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dataset, shard, seq),
  FOREIGN KEY (dataset, shard) REFERENCES shard_heads (dataset, shard)
);
`;

const migration: Migration = { version: 7, name: 'shard_snapshots', sql };
export default migration;
