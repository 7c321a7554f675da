/**
 * The shard map of cluster mode on PostgreSQL (design: ../shared/design/cluster.md §3.2 "Replica
 * states", §3.3): a dataset's shard settings (`cluster_datasets`, migration 0003), and the state
 * of each replica (`shard_replicas`): what the controller assigned, what each replica reports it
 * applied, its joining of the in-sync set (ISR) and its demotion out of it.
 *
 * The two transitions that decide which replicas count for a write are guarded by the database:
 * - joining the ISR holds the shard's `shard_heads` row lock, the same lock every write takes to
 *   get its seq, so no write commits between the "caught up" check and the join;
 * - demotion is conditional on the epoch the demoter read, so a stale view of the map changes
 *   nothing.
 */
import { withTransaction, type Pool, type PoolClient } from '../outbound/postgres/pool.js';

export type ReplicaState = 'initializing' | 'active' | 'stale' | 'dropped';

export interface ClusterDatasetSettings {
  shards: number;
  replicas: number;
}

export interface ShardReplica {
  node: string;
  /** host:port of the node's internal API. */
  address: string;
  state: ReplicaState;
  /** The epoch of the row's last controller write: what `demote` is conditional on. */
  epoch: number;
  appliedSeq: number;
  /** The node's lease has not passed (on the database's clock). */
  live: boolean;
}

export interface ShardMapEntry {
  shard: number;
  lastSeq: number;
  /** Every replica not dropped, by node id. */
  replicas: ShardReplica[];
}

export interface NodeReplica {
  dataset: string;
  shard: number;
  state: ReplicaState;
  epoch: number;
  appliedSeq: number;
}

export interface JoinResult {
  joined: boolean;
  /** The shard's head when the join was decided. */
  lastSeq: number;
}

/** The bounds of migration 0003's CHECKs, checked here so a bad call fails with a clear RangeError. */
function checkSettings(shards: number, replicas: number): void {
  if (!Number.isInteger(shards) || shards < 1 || shards > 256) throw new RangeError(`a dataset has 1 to 256 shards (got ${shards})`);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 16) throw new RangeError(`a dataset has 1 to 16 replicas per shard (got ${replicas})`);
}

/**
 * Creates a dataset's shard settings and the heads of its shards, in one transaction. Calling it
 * again with the same settings changes nothing (a retried creation); with other settings it
 * throws RangeError and changes nothing, because the shard count routes every id and cannot
 * change under existing data.
 */
export async function createClusterDataset(pool: Pool, dataset: string, shards: number, replicas: number): Promise<void> {
  if (!dataset) throw new RangeError('a cluster dataset has a non-empty name');
  checkSettings(shards, replicas);
  await withTransaction(pool, async (client) => {
    await client.query('INSERT INTO cluster_datasets (dataset, shards, replicas) VALUES ($1, $2, $3) ON CONFLICT (dataset) DO NOTHING', [
      dataset,
      shards,
      replicas,
    ]);
    // A new statement sees a concurrent creator's committed row (the INSERT waited for it).
    const { rows } = await client.query<{ shards: number; replicas: number }>(
      'SELECT shards, replicas FROM cluster_datasets WHERE dataset = $1 FOR SHARE',
      [dataset],
    );
    const existing = rows[0]!;
    if (existing.shards !== shards || existing.replicas !== replicas) {
      throw new RangeError(
        `cluster dataset '${dataset}' exists with ${existing.shards} shards and ${existing.replicas} replicas; ` +
          `it cannot be created again with ${shards} shards and ${replicas} replicas`,
      );
    }
    // The SQL of createShards (shard-log.ts), on this transaction's client.
    await client.query(
      'INSERT INTO shard_heads (dataset, shard) SELECT $1, s FROM generate_series(0, $2::int - 1) AS s ON CONFLICT (dataset, shard) DO NOTHING',
      [dataset, shards],
    );
  });
}

/**
 * Deletes a dataset's replicas, log, snapshots, shard heads and settings, in one transaction
 * (children first, for the foreign keys). Resolves with the object keys its snapshots and bulk
 * log entries named: the caller deletes the objects once the rows are gone.
 *
 * Locks first, in the order everyone else takes them: the settings row (the controller reads it
 * FOR SHARE before it places replicas, so it never adds one to a dataset going away), then the
 * shard heads in shard order (as writes and ISR joins do), so a drop racing placement or writes
 * waits for them instead of deadlocking or meeting a row that appeared under it.
 */
export async function dropClusterDataset(pool: Pool, dataset: string): Promise<string[]> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT 1 FROM cluster_datasets WHERE dataset = $1 FOR UPDATE', [dataset]);
    await client.query('SELECT 1 FROM shard_heads WHERE dataset = $1 ORDER BY shard FOR UPDATE', [dataset]);
    await client.query('DELETE FROM shard_replicas WHERE dataset = $1', [dataset]);
    const log = await client.query<{ blob_key: string | null }>('DELETE FROM vector_log WHERE dataset = $1 RETURNING blob_key', [dataset]);
    const snapshots = await client.query<{ object_key: string }>('DELETE FROM shard_snapshots WHERE dataset = $1 RETURNING object_key', [dataset]);
    await client.query('DELETE FROM shard_heads WHERE dataset = $1', [dataset]);
    await client.query('DELETE FROM cluster_datasets WHERE dataset = $1', [dataset]);
    return [...snapshots.rows.map((r) => r.object_key), ...log.rows.flatMap((r) => (r.blob_key ? [r.blob_key] : []))];
  });
}

/** A dataset's shard settings, or null when it is not a cluster dataset. */
export async function clusterDataset(pool: Pool | PoolClient, dataset: string): Promise<ClusterDatasetSettings | null> {
  const { rows } = await pool.query<{ shards: number; replicas: number }>('SELECT shards, replicas FROM cluster_datasets WHERE dataset = $1', [
    dataset,
  ]);
  return rows.length === 0 ? null : { shards: rows[0]!.shards, replicas: rows[0]!.replicas };
}

/** Every shard of a dataset (by shard; none when it has no heads), with its head and its replicas that are not dropped. */
export async function shardMap(pool: Pool | PoolClient, dataset: string): Promise<ShardMapEntry[]> {
  const { rows } = await pool.query<{
    shard: number;
    last_seq: string;
    node: string | null;
    address: string | null;
    state: ReplicaState | null;
    epoch: string | null;
    applied_seq: string | null;
    live: boolean | null;
  }>(
    `SELECT h.shard, h.last_seq, r.node, n.address, r.state, r.epoch, r.applied_seq, n.lease_until > now() AS live
       FROM shard_heads h
       LEFT JOIN shard_replicas r ON r.dataset = h.dataset AND r.shard = h.shard AND r.state <> 'dropped'
       LEFT JOIN nodes n ON n.id = r.node
      WHERE h.dataset = $1
      ORDER BY h.shard, r.node`,
    [dataset],
  );
  const out: ShardMapEntry[] = [];
  for (const r of rows) {
    let entry = out[out.length - 1];
    if (!entry || entry.shard !== r.shard) out.push((entry = { shard: r.shard, lastSeq: Number(r.last_seq), replicas: [] }));
    if (r.node === null) continue; // a shard with no replica (the LEFT JOIN's row of NULLs)
    entry.replicas.push({
      node: r.node,
      address: r.address!,
      state: r.state!,
      epoch: Number(r.epoch),
      appliedSeq: Number(r.applied_seq),
      live: r.live === true,
    });
  }
  return out;
}

/**
 * Records what a replica has applied of its shard's log (and, when given, its live vectors then).
 * The seq never moves back: reports may arrive out of order. False when the replica has no row.
 */
export async function reportApplied(pool: Pool | PoolClient, dataset: string, shard: number, node: string, appliedSeq: number, vectors?: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    'UPDATE shard_replicas SET applied_seq = GREATEST(applied_seq, $4), vectors = COALESCE($5, vectors), updated_at = now() WHERE dataset = $1 AND shard = $2 AND node = $3',
    [dataset, shard, node, appliedSeq, vectors ?? null],
  );
  return (rowCount ?? 0) > 0;
}

/** Each dataset's live vectors: per shard, what its in-sync replicas last reported, summed over the shards. */
export async function datasetVectors(pool: Pool | PoolClient): Promise<[string, number][]> {
  const { rows } = await pool.query<{ dataset: string; vectors: string }>(
    `SELECT dataset, sum(v)::bigint AS vectors FROM (
       SELECT dataset, shard, max(vectors) AS v FROM shard_replicas WHERE state = 'active' AND vectors IS NOT NULL GROUP BY dataset, shard
     ) AS per_shard GROUP BY dataset ORDER BY dataset`,
  );
  return rows.map((r) => [r.dataset, Number(r.vectors)]);
}

/**
 * A caught-up replica joins the ISR (§3.3 "Joining the ISR safely"): in one transaction it locks
 * the shard's head, and becomes 'active' only when it has applied up to the head and is
 * 'initializing' or 'stale'. Writers lock the same head row to take their seq, so no write
 * commits between this check and the join: every write after it waits for the join to commit,
 * and so counts the new replica. An 'active' replica is already in: joined. A 'dropped' replica,
 * or none, never joins; its progress is recorded either way.
 *
 * The head is locked FOR NO KEY UPDATE: the lock a writer's `UPDATE shard_heads SET last_seq`
 * takes, so the two queue on each other as the design needs; FOR UPDATE would also queue behind
 * the controller's replica inserts (their foreign key check holds the head FOR KEY SHARE) while
 * that controller waits for the replica row this transaction locks next: a deadlock.
 */
export async function joinIsr(pool: Pool, dataset: string, shard: number, node: string, appliedSeq: number): Promise<JoinResult> {
  return withTransaction(pool, async (client) => {
    const head = await client.query<{ last_seq: string }>(
      'SELECT last_seq FROM shard_heads WHERE dataset = $1 AND shard = $2 FOR NO KEY UPDATE',
      [dataset, shard],
    );
    if (head.rows.length === 0) throw new Error(`shard ${shard} of dataset '${dataset}' has no head`);
    const lastSeq = Number(head.rows[0]!.last_seq);
    const replica = await client.query<{ state: ReplicaState }>(
      'SELECT state FROM shard_replicas WHERE dataset = $1 AND shard = $2 AND node = $3 FOR UPDATE',
      [dataset, shard, node],
    );
    const state = replica.rows[0]?.state;
    if (state === undefined) return { joined: false, lastSeq };
    const joins = state === 'active' || ((state === 'initializing' || state === 'stale') && appliedSeq >= lastSeq);
    await client.query(
      `UPDATE shard_replicas SET applied_seq = GREATEST(applied_seq, $4), state = CASE WHEN $5::boolean THEN 'active' ELSE state END, updated_at = now()
        WHERE dataset = $1 AND shard = $2 AND node = $3`,
      [dataset, shard, node, appliedSeq, joins],
    );
    return { joined: joins, lastSeq };
  });
}

/**
 * Takes an active replica out of the ISR (a write's ack timed out on it, §3.3), only if its row
 * is still at the epoch the caller read: a map rewritten since then is not overridden. True when
 * it was demoted.
 */
export async function demote(pool: Pool | PoolClient, dataset: string, shard: number, node: string, epoch: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE shard_replicas SET state = 'stale', updated_at = now()
      WHERE dataset = $1 AND shard = $2 AND node = $3 AND state = 'active' AND epoch = $4`,
    [dataset, shard, node, epoch],
  );
  return (rowCount ?? 0) > 0;
}

/** The replicas a node holds or should load (every state but 'dropped'), by dataset and shard. */
export async function replicasOfNode(pool: Pool | PoolClient, node: string): Promise<NodeReplica[]> {
  const { rows } = await pool.query<{ dataset: string; shard: number; state: ReplicaState; epoch: string; applied_seq: string }>(
    `SELECT dataset, shard, state, epoch, applied_seq FROM shard_replicas WHERE node = $1 AND state <> 'dropped' ORDER BY dataset, shard`,
    [node],
  );
  return rows.map((r) => ({ dataset: r.dataset, shard: r.shard, state: r.state, epoch: Number(r.epoch), appliedSeq: Number(r.applied_seq) }));
}
