/**
 * Cluster mode's part of the composition root (app.ts calls it when SABLE_DATABASE_URL is set):
 * the PostgreSQL pool and its migrations, the node's LISTEN connection, the catalog journal
 * (control.mdb becomes this node's copy of the cluster's catalog), membership with a
 * self-fencing heartbeat, the controller (one node at a time holds its lease), the shard host
 * (search role), and the router that the retrieval use-cases write and search through.
 *
 * Two steps, because the catalog must be the cluster's before anything reads or writes it (the
 * first admin key), and the shard host needs the engine and search pool opened after it.
 */
import type { DatasetPlacement } from '../catalog/datasets/service.js';
import type { ControlStore } from '../catalog/store.js';
import { withAdvisoryLock } from '../cluster/advisory-lock.js';
import { CatalogLog } from '../cluster/catalog-log.js';
import { Controller } from '../cluster/controller.js';
import { Heartbeat, registerNode } from '../cluster/membership.js';
import { Notifications } from '../cluster/notifications.js';
import { PgJobQueue } from '../cluster/pg-job-queue.js';
import { RunLog } from '../cluster/run-log.js';
import { createClusterDataset, datasetVectors, dropClusterDataset } from '../cluster/replica-state.js';
import { ClusterRouter } from '../cluster/router.js';
import { ShardHost } from '../cluster/shard-host.js';
import type { Engine, ShardRunner } from '../engine/index.js';
import type { ObjectStore } from '../objects/object-store.js';
import { configError } from '../errors/codes.js';
import { migrate } from '../outbound/postgres/migrations.js';
import { openPool } from '../outbound/postgres/pool.js';
import type { ClusterConfig } from './config.js';

/** Tells controllers and search nodes that the shard map changed (a dataset made or dropped, replicas moved). */
const SHARD_MAP_CHANNEL = 'sable_shard_map';

export interface ClusterNode {
  readonly config: ClusterConfig;
  readonly catalog: CatalogLog;
  readonly placement: DatasetPlacement;
  /** The cluster's job queue: every node lists every job, any worker takes it. */
  readonly jobs: PgJobQueue;
  /** Answer runs recorded for every node, and other nodes' runs found. */
  readonly runs: RunLog;
  /** Step two: hosts replicas (search role) and routes; the router is what retrieval takes. */
  serve(engine: Engine, runner: ShardRunner, store: ControlStore, objects: ObjectStore, stagingDir: string): Promise<{ router: ClusterRouter; host: ShardHost | undefined }>;
  /** For /healthz: this node's view of itself. */
  status(): Record<string, unknown>;
  /** Each dataset's live vectors across its shards, as the replicas last reported (for /metrics). */
  datasetVectors(): Promise<[string, number][]>;
  /** Runs `fn` while no other node runs one of the same key, with the catalog copy at the head first. */
  exclusive<T>(key: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function joinCluster(config: ClusterConfig, store: ControlStore): Promise<ClusterNode> {
  const pool = openPool(config.databaseUrl, {
    max: 16,
    applicationName: `sable ${config.nodeId}`,
    statementTimeoutMs: config.databaseTimeoutMs,
    connectTimeoutMs: Math.min(10_000, config.databaseTimeoutMs),
    // A node paused inside a catalog transaction holds the lock every node's catalog writes take:
    // the server ends its session soon after the node's own lease would have lapsed.
    idleInTransactionMs: Math.max(5_000, 2 * config.leaseMs),
  });
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => {});
    if ((err as { code?: string }).code === 'invalid_configuration') throw err;
    throw configError(`the cluster database (SABLE_DATABASE_URL) cannot be used: ${(err as Error).message}`);
  }
  const notifications = new Notifications(config.databaseUrl);
  const catalog = new CatalogLog(store, { pool, notifications, nodeId: config.nodeId });
  await catalog.start();
  await registerNode(pool, { id: config.nodeId, address: config.advertiseUrl, roles: config.roles }, config.leaseMs);
  const heartbeat = new Heartbeat(pool, config.nodeId, { intervalMs: config.heartbeatMs, leaseMs: config.leaseMs });
  await heartbeat.start();
  const jobs = new PgJobQueue(pool, config.nodeId);
  await jobs.start();
  const runs = new RunLog({ pool, notifications, nodeId: config.nodeId, leaseMs: config.leaseMs, graceMs: config.graceMs, intervalMs: config.heartbeatMs });
  await runs.start();
  const tellShardMap = () => void pool.query('SELECT pg_notify($1, $2)', [SHARD_MAP_CHANNEL, config.nodeId]).catch(() => {});
  const controller = new Controller(pool, config.nodeId, { leaseMs: config.leaseMs, intervalMs: config.heartbeatMs, graceMs: config.graceMs, onChange: tellShardMap });
  controller.start();
  let host: ShardHost | undefined;
  const unsubscribe = await notifications.subscribe(SHARD_MAP_CHANNEL, () => {
    void controller.reconcile().catch(() => {});
    void host?.nudge().catch(() => {});
  });
  let router: ClusterRouter | undefined;
  let objectStore: ObjectStore | undefined;
  const routed = () => {
    if (!router) throw new Error('the cluster router is not serving yet');
    return router;
  };
  const placement: DatasetPlacement = {
    stats: (r) => routed().stats(r),
    rebuild: (r) => routed().rebuild(r),
    apply: (r) => routed().apply(r),
    tuning: (r) => routed().tuning(r),
    upsert: (r, ids, vectors, metadata) => routed().upsertRows(r, ids, vectors, metadata),
    create: async (r) => {
      await createClusterDataset(pool, r.id, config.shards, config.replicas);
      tellShardMap();
    },
    drop: async (id) => {
      const unreferenced = await dropClusterDataset(pool, id);
      tellShardMap();
      // No row names them any more: an object whose removal fails is garbage, never read.
      for (const key of unreferenced) await objectStore?.remove(key).catch(() => {});
    },
  };
  return {
    config,
    catalog,
    placement,
    jobs,
    runs,
    async serve(engine, runner, control, objects, stagingDir) {
      objectStore = objects;
      if (config.roles.includes('search')) {
        host = new ShardHost({
          pool,
          notifications,
          nodeId: config.nodeId,
          engine,
          runner,
          heartbeat,
          record: (id) => control.datasets.get(id),
          catalogAt: async (seq) => {
            if (catalog.applied < seq) await catalog.sync();
          },
          intervalMs: Math.min(1000, config.heartbeatMs),
          objects,
          stagingDir,
          snapshotEntries: config.snapshotEntries,
          snapshotIntervalMs: config.snapshotIntervalMs,
        });
        await host.start();
      }
      router = new ClusterRouter({
        pool,
        nodeId: config.nodeId,
        secret: config.secret,
        ackTimeoutMs: config.ackTimeoutMs,
        objects,
        catalogHead: async () => {
          await catalog.sync();
          return catalog.applied;
        },
        ...(host ? { local: host } : {}),
      });
      return { router, host };
    },
    datasetVectors: () => datasetVectors(pool),
    exclusive: (key, fn) =>
      withAdvisoryLock(pool, key, async () => {
        await catalog.sync(); // what the node that held the lock before wrote
        return fn();
      }),
    status: () => ({
      node_id: config.nodeId,
      roles: config.roles,
      serving: heartbeat.serving(),
      controller: controller.isLeader(),
      catalog_seq: catalog.applied,
      replicas: host?.list().length ?? 0,
      last_snapshot: host?.lastSnapshot ?? null,
    }),
    async close() {
      unsubscribe();
      await host?.stop();
      await runs.stop();
      await controller.stop();
      await heartbeat.stop();
      await catalog.stop();
      await notifications.close();
      await pool.end();
    },
  };
}
