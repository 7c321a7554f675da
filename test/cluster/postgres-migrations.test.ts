// Cluster mode's database on a real PostgreSQL (testkit/postgres.ts): the schema migrations
// (applied once, also when two nodes start at once; refused when the database's record differs or
// is newer), and the per-shard log of migration 0001 keeping seqs dense and in commit order under
// concurrent writers (design: ../shared/design/cluster.md §3.3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SableError } from '../../dist/errors/codes.js';
import { MIGRATIONS, migrate, migrationChecksum } from '../../dist/outbound/postgres/migrations.js';
import { openPool, withTransaction, type Pool } from '../../dist/outbound/postgres/pool.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';

let server: LocalPostgres;
let admin: Pool;
const pools: Pool[] = [];
let databases = 0;

/** A pool on a fresh, empty database of the test's server. */
async function freshDatabase(max = 4): Promise<{ name: string; pool: () => Pool }> {
  const name = `t${++databases}`;
  await admin.query(`CREATE DATABASE ${name}`);
  return {
    name,
    pool() {
      const pool = openPool(server.url.replace(/\/postgres$/, `/${name}`), { max });
      pools.push(pool);
      return pool;
    },
  };
}

async function migrationRows(pool: Pool) {
  const { rows } = await pool.query('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
  return rows;
}

async function refusal(promise: Promise<unknown>): Promise<SableError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SableError);
  expect((err as SableError).code).toBe('invalid_configuration');
  return err as SableError;
}

beforeAll(async () => {
  server = await startPostgres();
  admin = openPool(server.url, { max: 1 });
}, 60_000);

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await admin?.end();
  await server?.stop();
});

describe('migrate', () => {
  it('applies 0001 to 0008 on an empty database and records them with their checksums; a second run is a no-op', async () => {
    const pool = (await freshDatabase()).pool();
    expect(await migrate(pool)).toEqual({ applied: [1, 2, 3, 4, 5, 6, 7, 8, 9], version: 9 });
    expect(await migrationRows(pool)).toEqual([
      { version: 1, name: 'cluster_core', checksum: migrationChecksum(MIGRATIONS[0]) },
      { version: 2, name: 'cluster_jobs', checksum: migrationChecksum(MIGRATIONS[1]) },
      { version: 3, name: 'cluster_catalog', checksum: migrationChecksum(MIGRATIONS[2]) },
      { version: 4, name: 'job_records', checksum: migrationChecksum(MIGRATIONS[3]) },
      { version: 5, name: 'run_log', checksum: migrationChecksum(MIGRATIONS[4]) },
      { version: 6, name: 'catalog_checkpoints', checksum: migrationChecksum(MIGRATIONS[5]) },
      { version: 7, name: 'shard_snapshots', checksum: migrationChecksum(MIGRATIONS[6]) },
      { version: 8, name: 'job_fences', checksum: migrationChecksum(MIGRATIONS[7]) },
      { version: 9, name: 'replica_vectors', checksum: migrationChecksum(MIGRATIONS[8]) },
    ]);
    const { rows } = await pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`);
    expect(rows.map((r) => r.table_name)).toEqual([
      'catalog_checkpoints',
      'catalog_head',
      'catalog_log',
      'cluster_datasets',
      'cluster_jobs',
      'cluster_schedules',
      'job_file_records',
      'job_idempotency_keys',
      'job_records',
      'leases',
      'nodes',
      'run_events',
      'runs',
      'schema_migrations',
      'shard_heads',
      'shard_replicas',
      'shard_snapshots',
      'vector_log',
    ]);

    expect(await migrate(pool)).toEqual({ applied: [], version: 9 });
    expect(await migrationRows(pool)).toHaveLength(9);
  });

  it('applies each migration once when two nodes start at the same time', async () => {
    for (let round = 0; round < 3; round++) {
      const db = await freshDatabase();
      const [a, b] = [db.pool(), db.pool()];
      await Promise.all([a.query('SELECT 1'), b.query('SELECT 1')]); // both connected: the race is in migrate
      const results = await Promise.all([migrate(a), migrate(b)]);
      expect(results.map((r) => r.applied).sort()).toEqual([[], [1, 2, 3, 4, 5, 6, 7, 8, 9]]);
      expect(await migrationRows(a)).toHaveLength(9);
    }
  });

  it('refuses a database whose recorded migration differs from the shipped one', async () => {
    const pool = (await freshDatabase()).pool();
    await migrate(pool);
    await pool.query(`UPDATE schema_migrations SET checksum = 'altered' WHERE version = 1`);
    const err = await refusal(migrate(pool));
    expect(err.message).toMatch(/^The database's migration 1 \(cluster_core\) differs from the one this build of Sable ships \(checksum altered, expected [0-9a-f]{64}\)/);
    expect(err.message).toContain('refusing to use the database');
  });

  it('refuses a database migrated by a newer build, and applies nothing', async () => {
    const pool = (await freshDatabase()).pool();
    await migrate(pool);
    await pool.query(`INSERT INTO schema_migrations (version, name, checksum) VALUES (99, 'from_the_future', 'x')`);
    const err = await refusal(migrate(pool));
    expect(err.message).toBe(
      `The database's schema has migration 99 (from_the_future), which this build of Sable does not know (it knows 1 to ${MIGRATIONS.length}): ` +
        'the database was migrated by a newer build; run that build or a newer one.',
    );
    // On an empty database too (no 0001 yet): nothing is applied before the refusal.
    const empty = (await freshDatabase()).pool();
    await empty.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    await empty.query(`INSERT INTO schema_migrations (version, name, checksum) VALUES (99, 'later', 'x')`);
    await refusal(migrate(empty));
    const { rows } = await empty.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'vector_log'`);
    expect(rows[0].n).toBe(0);
  });
});

describe('the per-shard vector log of 0001', () => {
  it('gives 8 concurrent writers dense seqs 1..400, in commit order, and keeps request ids unique per shard', async () => {
    const WRITERS = 8;
    const EACH = 50;
    const pool = (await freshDatabase(WRITERS + 1)).pool();
    await migrate(pool);
    await pool.query(`INSERT INTO shard_heads (dataset, shard) VALUES ('ds', 0), ('ds', 1)`);

    const append = (requestId: string) =>
      withTransaction(pool, async (client) => {
        const head = await client.query<{ last_seq: string }>(
          'UPDATE shard_heads SET last_seq = last_seq + 1 WHERE dataset = $1 AND shard = $2 RETURNING last_seq',
          ['ds', 0],
        );
        const seq = Number(head.rows[0].last_seq);
        await client.query(`INSERT INTO vector_log (dataset, shard, seq, op, body, request_id) VALUES ($1, $2, $3, 'upsert', $4, $5)`, [
          'ds',
          0,
          seq,
          Buffer.from(requestId),
          requestId,
        ]);
        return seq;
      });

    // A tailer polling `seq > last` as a replica does: with the row lock, every batch it sees
    // starts right after what it saw before (a later seq never commits before an earlier one).
    let writing = true;
    const tailed: number[] = [];
    const tailer = (async () => {
      let last = 0;
      for (let polls = 0; polls < 10_000; polls++) {
        const done = !writing;
        const { rows } = await pool.query<{ seq: string }>('SELECT seq FROM vector_log WHERE dataset = $1 AND shard = $2 AND seq > $3 ORDER BY seq', ['ds', 0, last]);
        for (const r of rows) tailed.push(Number(r.seq));
        if (rows.length > 0) last = Number(rows.at(-1)!.seq);
        if (done) return;
        await new Promise((r) => setTimeout(r, 2));
      }
    })();

    const perWriter = await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        const seqs: number[] = [];
        for (let i = 0; i < EACH; i++) seqs.push(await append(`w${w}:${i}`));
        return seqs;
      }),
    );
    writing = false;
    await tailer;

    const all = perWriter.flat().sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: WRITERS * EACH }, (_, i) => i + 1));
    for (const seqs of perWriter) expect(seqs).toEqual([...seqs].sort((a, b) => a - b)); // each writer's own order kept
    expect(tailed).toEqual(all);
    const { rows } = await pool.query(`SELECT last_seq, (SELECT count(*)::int FROM vector_log WHERE dataset = 'ds' AND shard = 0) AS n FROM shard_heads WHERE dataset = 'ds' AND shard = 0`);
    expect(rows[0]).toEqual({ last_seq: String(WRITERS * EACH), n: WRITERS * EACH });

    // A retried request fails on its request id and rolls back its seq: the log stays dense.
    await expect(append('w0:0')).rejects.toThrow(/vector_log_request/);
    expect(await append('fresh')).toBe(WRITERS * EACH + 1);
    // The same request id on another shard is another entry (one request writes one per shard).
    await pool.query(`INSERT INTO vector_log (dataset, shard, seq, op, body, request_id) VALUES ('ds', 1, 1, 'delete', '\\x00', 'w0:0')`);
  });
});
