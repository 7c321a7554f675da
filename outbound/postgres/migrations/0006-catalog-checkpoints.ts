/**
 * Migration 0006: checkpoints of the replicated catalog (cluster/catalog-log.ts). A checkpoint
 * is every record of the catalog as of one seq of `catalog_log`, gzip'd msgpack; once one is
 * taken the log entries up to its seq are deleted, so a new node loads the checkpoint and
 * replays only what came after, and the log stops growing with the cluster's age.
 * Shipped SQL never changes once released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
CREATE TABLE catalog_checkpoints (
  seq      bigint PRIMARY KEY CHECK (seq >= 1),
  taken_at timestamptz NOT NULL DEFAULT now(),
  node     text NOT NULL,
  body     bytea NOT NULL
);
`;

const migration: Migration = { version: 6, name: 'catalog_checkpoints', sql };
export default migration;
