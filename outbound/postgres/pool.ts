/**
 * The PostgreSQL connection pool of cluster mode (node-postgres) and its one transaction helper.
 * Every statement is bounded twice: in the server (statement_timeout) and in the client
 * (query_timeout, a little longer), because a node cut from the database by a silent network
 * drop never hears the server's timeout; a connection whose statement timed out in the client is
 * discarded (pg-pool releases it with the error). With the connect timeout, a node cut from the
 * database fails its calls in bounded time instead of hanging; the server names each connection
 * `sable` (application_name) in pg_stat_activity. bigint columns come back as strings (the pg
 * default); callers convert.
 */
import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export interface PoolOptions {
  /** Connections at most (default 10). */
  max?: number;
  /** Bound of one statement, in the server (default 30 s). */
  statementTimeoutMs?: number;
  /** Bound of opening a connection (default 10 s). */
  connectTimeoutMs?: number;
  /** Bound of one statement's answer, in the client (default statementTimeoutMs + 2 s). */
  queryTimeoutMs?: number;
  /** How long a session may sit idle inside a transaction before the server ends it (default 60 s). */
  idleInTransactionMs?: number;
  /** Shown in pg_stat_activity (default 'sable'). */
  applicationName?: string;
}

export function openPool(url: string, options: PoolOptions = {}): Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'sable',
    statement_timeout: statementTimeoutMs,
    query_timeout: options.queryTimeoutMs ?? statementTimeoutMs + 2_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // A session left idle inside a transaction (a paused process) stops holding row locks.
    idle_in_transaction_session_timeout: options.idleInTransactionMs ?? 60_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection that breaks (server restart, network cut) is reported here and dropped
  // from the pool; unhandled, the event would end the process. The next checkout reconnects.
  pool.on('error', () => {});
  // A checked-out connection that breaks between two statements (a transaction's) emits on the
  // client itself, where nobody listens: the process would end. Its next statement fails instead,
  // and the transaction's holder discards it.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * Runs `fn` in one transaction on one connection: BEGIN, then COMMIT when it resolves or ROLLBACK
 * when it throws (its error is rethrown). The connection goes back to the pool in every case, and
 * is discarded instead when the ROLLBACK itself failed (its state is unknown).
 */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackErr) {
      broken = rollbackErr as Error;
    }
    throw err;
  } finally {
    client.release(broken);
  }
}
