/**
 * Versioned schema migrations of the cluster database, applied at start. Each migration is a
 * numbered module in migrations/ holding its SQL as a string (so it is in dist/ as it is in the
 * source tree), listed in MIGRATIONS in order. `schema_migrations` records each one applied with
 * the sha256 of its SQL.
 *
 * `migrate` runs in one transaction under a transaction-level advisory lock, so nodes starting at
 * once apply each migration exactly once (the others wait, then find it applied), and a failure
 * applies nothing. It refuses to go on (invalid_configuration, which stops the service) when a
 * recorded migration differs from the one this build ships, or when the database has a version
 * this build does not know (it was migrated by a newer build). Migrations therefore cannot use
 * statements that refuse to run in a transaction (CREATE INDEX CONCURRENTLY).
 */
import { createHash } from 'node:crypto';
import { configError } from '../../errors/codes.js';
import clusterCore from './migrations/0001-cluster-core.js';
import clusterJobs from './migrations/0002-cluster-jobs.js';
import clusterCatalog from './migrations/0003-cluster-catalog.js';
import jobRecords from './migrations/0004-job-records.js';
import runLog from './migrations/0005-run-log.js';
import catalogCheckpoints from './migrations/0006-catalog-checkpoints.js';
import shardSnapshots from './migrations/0007-shard-snapshots.js';
import jobFences from './migrations/0008-job-fences.js';
import replicaVectors from './migrations/0009-replica-vectors.js';
import { withTransaction, type Pool } from './pool.js';

export interface Migration {
  /** 1, 2, 3...: the order they apply in. */
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [clusterCore, clusterJobs, clusterCatalog, jobRecords, runLog, catalogCheckpoints, shardSnapshots, jobFences, replicaVectors];

/** The advisory lock key of migrations (any fixed bigint; "sable" + 1 in hex digits). */
export const MIGRATION_LOCK_KEY = '0x5ab1e0001';

/** How long a start may wait for another node's migrations and apply its own. */
const MIGRATE_TIMEOUT = '5min';

export function migrationChecksum(migration: Migration): string {
  return createHash('sha256').update(migration.sql).digest('hex');
}

export interface MigrateResult {
  /** Versions this call applied, in order (empty when the schema was current). */
  applied: number[];
  /** The schema version after the call. */
  version: number;
}

export async function migrate(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrateResult> {
  checkList(migrations);
  const known = new Map(migrations.map((m) => [m.version, m]));
  const newest = migrations.at(-1)?.version ?? 0;
  return withTransaction(pool, async (client) => {
    await client.query(`SET LOCAL statement_timeout = '${MIGRATE_TIMEOUT}'`);
    await client.query(`SELECT pg_advisory_xact_lock(${BigInt(MIGRATION_LOCK_KEY)})`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      checksum   text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
      'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
    );
    const done = new Set<number>();
    for (const row of rows) {
      const shipped = known.get(row.version);
      if (!shipped) {
        throw configError(
          `The database's schema has migration ${row.version} (${row.name}), which this build of Sable does not know (it knows 1 to ${newest}): ` +
            'the database was migrated by a newer build; run that build or a newer one.',
        );
      }
      const sum = migrationChecksum(shipped);
      if (row.checksum !== sum) {
        throw configError(
          `The database's migration ${row.version} (${row.name}) differs from the one this build of Sable ships ` +
            `(checksum ${row.checksum}, expected ${sum}): it was applied by another build or altered by hand; refusing to use the database.`,
        );
      }
      done.add(row.version);
    }
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        migrationChecksum(migration),
      ]);
      applied.push(migration.version);
    }
    return { applied, version: newest };
  });
}

/** The shipped list is 1, 2, 3... in order (a bug of the build otherwise). */
function checkList(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${m.name} has version ${m.version} at position ${i + 1}: migrations are numbered 1, 2, 3... in order`);
  });
}
