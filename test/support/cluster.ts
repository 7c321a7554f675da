// A cluster for a test: one PostgreSQL (testkit/postgres.ts), one local S3 server, and `sable
// serve` processes in cluster mode on 127.0.0.2, .3, .4..., each on a fixed port and data
// directory of its own, so a node killed or stopped can be started again as itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../testkit/ports.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';
import { S3_KEY, S3_SECRET, startS3, type LocalS3 } from '../../testkit/s3.js';
import { adminKey, client, serve, type Served } from './serve.js';

export interface ClusterOptions {
  nodes: number;
  shards?: number;
  replicas?: number;
  leaseMs?: number;
  graceMs?: number;
  ackTimeoutMs?: number;
  /** More environment for every node. */
  env?: Record<string, string>;
  /**
   * Each node reaches PostgreSQL on an address of its own (127.0.0.12, .13, ... for nodes 1, 2,
   * ...; `dbHost(i)`), so a firewall rule on one address cuts one node from the database.
   */
  postgresPerNode?: boolean;
  /** A PostgreSQL server the test started (a primary with a standby, say) instead of a new one; stopped with the cluster. */
  postgres?: LocalPostgres;
}

export interface TestCluster {
  pg: LocalPostgres;
  /** The local S3 server the nodes keep uploads and snapshots in. */
  s3: LocalS3;
  /** The running nodes by index (null while stopped). */
  nodes: (Served | null)[];
  key: string;
  env: Record<string, string>;
  /** Each node's data directory, by index (the first node's holds admin.key). */
  dirs: string[];
  /** The address node i reaches PostgreSQL on (127.0.0.1 unless postgresPerNode). */
  dbHost(i: number): string;
  start(i: number): Promise<Served>;
  /** A JSON client of node i (its current process). */
  call(i: number): ReturnType<typeof client>;
  stop(): Promise<void>;
}


export async function startCluster(o: ClusterOptions): Promise<TestCluster> {
  const hosts = Array.from({ length: o.nodes }, (_, i) => `127.0.0.${i + 2}`);
  const dbHosts = hosts.map((_, i) => (o.postgresPerNode ? `127.0.0.${i + 12}` : '127.0.0.1'));
  const [pg, s3]: [LocalPostgres, LocalS3] = await Promise.all([
    o.postgres ?? startPostgres({ settings: { listen_addresses: [...new Set(['127.0.0.1', ...dbHosts])].join(',') } }),
    startS3('sable'),
  ]);
  const env: Record<string, string> = {
    SABLE_DATABASE_URL: pg.url,
    SABLE_CLUSTER_SECRET: 'a-cluster-secret-of-the-test',
    SABLE_MASTER_KEY: 'ab'.repeat(32),
    SABLE_S3_ENDPOINT: s3.endpoint,
    SABLE_S3_BUCKET: 'sable',
    SABLE_S3_ACCESS_KEY_ID: S3_KEY,
    SABLE_S3_SECRET_ACCESS_KEY: S3_SECRET,
    SABLE_SHARDS: String(o.shards ?? 2),
    SABLE_REPLICAS: String(o.replicas ?? 2),
    SABLE_NODE_LEASE_MS: String(o.leaseMs ?? 1500),
    SABLE_REPLICA_GRACE_MS: String(o.graceMs ?? 500),
    SABLE_ACK_TIMEOUT_MS: String(o.ackTimeoutMs ?? 1500),
    SABLE_HTTP_ADAPTER: 'node',
    ...o.env,
  };
  const dirs = hosts.map((_, i) => mkdtempSync(join(tmpdir(), `sable-node${i + 1}-`)));
  const ports = await Promise.all(hosts.map((h) => freePort(h)));
  const cluster: TestCluster = {
    pg,
    s3,
    nodes: hosts.map(() => null),
    key: '',
    env,
    dirs,
    dbHost: (i) => dbHosts[i]!,
    async start(i) {
      const nodeEnv = { ...env, SABLE_DATABASE_URL: pg.url.replace('@127.0.0.1:', `@${dbHosts[i]}:`) };
      const node = await serve(null, nodeEnv, { args: ['--host', hosts[i]!, '--port', String(ports[i]), '--data-dir', dirs[i]!, '--node-id', `n${i + 1}`], stderrTail: 20_000 });
      cluster.nodes[i] = node;
      return node;
    },
    call: (i) => client(() => cluster.nodes[i]!.url, cluster.key),
    async stop() {
      for (const n of cluster.nodes) await n?.stop('SIGKILL').catch(() => {});
      await s3.stop();
      await pg.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
  // The first node writes the admin key; the others start once it has.
  await cluster.start(0);
  cluster.key = adminKey(dirs[0]!);
  await Promise.all(hosts.slice(1).map((_, k) => cluster.start(k + 1)));
  return cluster;
}

/** Retries a call while the cluster answers 503 (placement, catch-up, failover), for at most `ms`. */
export async function until503Passes(fn: () => Promise<{ status: number; body: any }>, ms = 15_000): Promise<{ status: number; body: any }> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await fn().catch((e: Error) => ({ status: 599, body: { error: 'network', message: e.message } }));
    if ((r.status !== 503 && r.status !== 599) || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Resolves with what `fn` answers once it is truthy (a failed call counts as not yet), polling every 150 ms for at most `ms`. */
export async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
