// The cluster target: three `sable serve` processes on one PostgreSQL and one local S3 server
// (test/support/cluster.ts). Calls rotate over the nodes, so what one call wrote the next reads
// through another node. Keys are made by the CLI on the cluster's catalog (SABLE_DATABASE_URL).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SETTINGS } from '../../dist/control-plane/config.js';
import { startCluster, until503Passes, type ClusterOptions, type TestCluster } from '../support/cluster.js';
import { walk } from '../support/walk.js';
import type { ContractTarget, TargetProfile } from './target.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');
const run = promisify(execFile);

/** loadConfig's flags as the SABLE_* variables a node reads them from (a node takes settings only from its environment). */
export function envOf(flags: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(flags).map(([flag, value]) => {
    const setting = SETTINGS.find((s) => s.flag === flag);
    if (!setting) throw new Error(`no setting --${flag}`);
    return [setting.env, value];
  }));
}

export const clusterProfile: TargetProfile = { kind: 'cluster', adapter: 'node', can: new Set() };

/**
 * A cluster whose suites may start another cluster with settings of their own (startOwn): seconds
 * per start, so only a file whose tests need it says so.
 */
export const clusterOwnProfile: TargetProfile = { ...clusterProfile, can: new Set(['own-service']) };

export async function startClusterTarget(o: ClusterOptions): Promise<ContractTarget & { cluster: TestCluster; close(): Promise<void> }> {
  const cluster = await startCluster(o);
  let next = 0;
  const urls = () => cluster.nodes.map((n) => n!.url);
  const cli = async (...args: string[]) => (await run(process.execPath, [CLI, 'keys', ...args], { env: { ...process.env, ...cluster.env } })).stdout;
  const status = async (url: string, path: string, key: string) => {
    const res = await fetch(url + path, { headers: { 'x-api-key': key } });
    return { status: res.status, body: await res.text() };
  };
  return {
    cluster,
    url: () => urls()[next++ % cluster.nodes.length]!,
    urls,
    admin: cluster.key,
    adminKeyFile: join(cluster.dirs[0]!, 'admin.key'),
    async newKey(org, role) {
      const made = JSON.parse(await cli('create', '--org', org, '--role', role));
      // Each node's catalog copy learns the key within a poll of the catalog log.
      for (const url of urls()) {
        const r = await until503Passes(async () => {
          const res = await status(url, '/datasets', made.key);
          return res.status === 401 ? { status: 503, body: res.body } : res;
        }, 5000);
        if (r.status !== 200) throw new Error(`key ${made.key_id} not usable on ${url}: ${r.status} ${r.body}`);
      }
      return made;
    },
    revokeKey: async (keyId) => void (await cli('revoke', keyId)),
    async settle(datasetId, key) {
      // The shard replicas are placed after the create answers: every node answers for the dataset once they are in sync.
      for (const url of urls()) {
        const r = await until503Passes(async () => status(url, `/datasets/${datasetId}/stats`, key), 15_000);
        if (r.status !== 200) throw new Error(`dataset ${datasetId} not served by ${url}: ${r.status} ${r.body}`);
      }
    },
    catalogFiles: () => walk(cluster.pg.dir),
    uploadFiles: () => walk(cluster.s3.directory),
    async startOwn(flags) {
      // Another cluster like this one (its own PostgreSQL and S3), the flags as its nodes' environment.
      const own = await startClusterTarget({ ...o, env: { ...o.env, ...envOf(flags) } });
      return { url: own.url(), admin: own.admin, close: own.close };
    },
    close: () => cluster.stop(),
  };
}
