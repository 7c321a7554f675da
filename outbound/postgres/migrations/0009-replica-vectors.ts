/**
 * Migration 0009: the live vectors of each shard replica, as it last reported them with its
 * applied seq (cluster/shard-host.ts), so any node's /metrics counts a dataset's vectors across
 * its shards without asking every search node. Null until the replica first reports.
 * Shipped SQL never changes once released: its checksum is recorded.
 */
import type { Migration } from '../migrations.js';

const sql = `
ALTER TABLE shard_replicas ADD COLUMN vectors bigint CHECK (vectors >= 0);
`;

const migration: Migration = { version: 9, name: 'replica_vectors', sql };
export default migration;
