/**
 * A named mutex across every node of the cluster: a session-level PostgreSQL advisory lock held
 * on one pooled connection while `fn` runs (the single-flight OAuth token refresh of the design,
 * ../shared/design/cluster.md §3.6). A node that dies while holding it loses its session, and
 * with it the lock.
 */
import { createHash } from 'node:crypto';
import type { Pool } from '../outbound/postgres/pool.js';

/** The lock's 64-bit key: the first 8 bytes of sha256(name). */
function keyOf(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}

export async function withAdvisoryLock<T>(pool: Pool, name: string, fn: () => Promise<T>): Promise<T> {
  const key = keyOf(name);
  const client = await pool.connect();
  // A lock or unlock that failed leaves the session's locks unknown: the connection is discarded
  // (its session ends, and with it any lock it holds) instead of going back to the pool.
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [key]).catch((e: Error) => {
      broken = e;
      throw e;
    });
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch((e: Error) => (broken = e));
    }
  } finally {
    client.release(broken);
  }
}
