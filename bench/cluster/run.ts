/**
 * `npm run bench:cluster`: cluster mode on this machine, beside the embedded service measured in
 * the same run (the peer: the same HTTP routes without PostgreSQL, logs or fan-out).
 *
 *   - write throughput: upserts of 100 vectors (64-d) from 8 concurrent clients, and search
 *     throughput: top-10 queries from 8 concurrent clients, for the embedded service, a
 *     1-node cluster (2 shards, 1 replica) and a 3-node cluster (2 shards, 2 replicas), each
 *     node a process on its own loopback address (127.0.0.2-4), all on this machine's cores;
 *   - failover: kill -9 of a node holding replicas, to the first successful search through a
 *     survivor (the client retries every 20 ms);
 *   - catch-up: after that kill, the time until the replacement replica of each shard (placed
 *     by the controller past the grace) has replayed the shard's log and joined the in-sync set.
 *
 * Writes results/cluster.md. The machine is shared and noisy: compare rows of one run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../testkit/ports.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';
import { startS3, S3_KEY, S3_SECRET, type LocalS3 } from '../../testkit/s3.js';
import { Rng } from '../../testkit/rng.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { serve, type Served } from '../service.js';
import { percentiles } from '../http/stats.js';

const DIM = 64;
const BATCH = 100;
const CLIENTS = 8;

interface Options {
  vectors: number;
  queries: number;
  catchup: number;
}

function parse(argv: string[]): Options {
  const o: Options = { vectors: 20_000, queries: 3000, catchup: 100_000 };
  for (const a of argv) {
    const [k, v] = a.replace(/^--/, '').split('=');
    if (k === 'vectors') o.vectors = Number(v);
    else if (k === 'queries') o.queries = Number(v);
    else if (k === 'catchup') o.catchup = Number(v);
    else if (k === 'help') {
      console.log('npm run bench:cluster -- [--vectors=20000] [--queries=3000] [--catchup=100000]');
      process.exit(0);
    } else throw new Error(`unknown flag ${a}`);
  }
  return o;
}

function caller(url: string, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(url + path, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

/** Retries while the answer is a 503 (placement, catch-up); throws on any other failure. */
async function must(call: ReturnType<typeof caller>, method: string, path: string, body?: unknown, ms = 60_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await call(method, path, body);
    if (r.status < 300) return r.body;
    if (r.status !== 503 || Date.now() > end) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

function vectors(rng: Rng, n: number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: DIM }, () => rng.next() * 2 - 1));
}

interface Throughput {
  setup: string;
  writesPerSecond: number;
  writeP99: number;
  searchesPerSecond: number;
  searchP99: number;
}

/** Loads `count` vectors in batches from CLIENTS clients (round robin over nodes), then runs `queries` searches. */
async function measure(setup: string, calls: ReturnType<typeof caller>[], datasetId: string, count: number, queries: number, rng: Rng): Promise<Throughput> {
  let next = 0;
  const writeLatencies: number[] = [];
  let t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (;;) {
        const start = next;
        next += BATCH;
        if (start >= count) return;
        const batch = vectors(rng, Math.min(BATCH, count - start)).map((values, i) => ({ id: start + i + 1, values, metadata: { tag: (start + i) % 10 } }));
        const t = performance.now();
        await must(calls[(c + start / BATCH) % calls.length]!, 'POST', `/datasets/${datasetId}/insert`, { vectors: batch });
        writeLatencies.push(performance.now() - t);
      }
    }),
  );
  const writeSeconds = (performance.now() - t0) / 1000;
  const searchLatencies: number[] = [];
  let done = 0;
  const qs = vectors(rng, Math.min(queries, 500));
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      while (done < queries) {
        const i = done++;
        const t = performance.now();
        await must(calls[(c + i) % calls.length]!, 'POST', `/datasets/${datasetId}/search`, { query: qs[i % qs.length], top_k: 10 });
        searchLatencies.push(performance.now() - t);
      }
    }),
  );
  const searchSeconds = (performance.now() - t0) / 1000;
  return {
    setup,
    writesPerSecond: count / writeSeconds,
    writeP99: percentiles(Float64Array.from(writeLatencies), [0.99])[0]!,
    searchesPerSecond: queries / searchSeconds,
    searchP99: percentiles(Float64Array.from(searchLatencies), [0.99])[0]!,
  };
}

interface Failover {
  loadSeconds: number;
  failoverMs: number;
  /** From the kill to the first replacement replica placed; -1 when none was seen. */
  placedMs: number;
  /** From the placement to every shard with 2 in-sync replicas again. */
  catchupMs: number;
  /** The last snapshot a node took before the kill (the snapshot path only). */
  snapshot: { rows: number; bytes: number; heldMs: number; totalMs: number } | null;
}

/**
 * Loads `count` vectors into a new dataset, kills a node holding replicas of it, and times the
 * first search through a survivor and the replacement replicas' catch-up. With `snapshots`, it
 * first waits until every shard has a snapshot of most of its log.
 */
async function failover(c: { started: Served[]; calls: ReturnType<typeof caller>[]; url: string }, count: number, rng: Rng, snapshots = false): Promise<Failover> {
  const big = await must(c.calls[0]!, 'POST', '/datasets', { name: 'catchup', dim: DIM, metric: 'l2' });
  const loadStart = performance.now();
  for (let start = 0; start < count; start += 1000) {
    const batch = vectors(rng, Math.min(1000, count - start)).map((values, i) => ({ id: start + i + 1, values }));
    await must(c.calls[start % 3]!, 'POST', `/datasets/${big.id}/insert`, { vectors: batch });
  }
  const loadSeconds = (performance.now() - loadStart) / 1000;
  const watch = new pg.Pool({ connectionString: c.url, max: 1 });
  try {
    let snapshot: Failover['snapshot'] = null;
    if (snapshots) {
      // Most of each shard's log is in its newest snapshot: a replacement replays the rest only.
      for (let waited = 0; waited < 120_000; waited += 200) {
        const { rows } = await watch.query<{ ok: boolean }>(
          `SELECT bool_and(s.seq >= h.last_seq * 0.8) AS ok FROM shard_heads h LEFT JOIN LATERAL (SELECT max(seq) AS seq FROM shard_snapshots x WHERE x.dataset = h.dataset AND x.shard = h.shard) s ON true WHERE h.dataset = $1`,
          [big.id],
        );
        if (rows[0]?.ok) break;
        await new Promise((res) => setTimeout(res, 200));
      }
      for (const n of c.started) {
        const health = await (await fetch(`${n.url}/healthz`)).json() as { cluster?: { last_snapshot?: Failover['snapshot'] & { dataset: string } } };
        const taken = health.cluster?.last_snapshot;
        if (taken && taken.dataset === big.id && (!snapshot || taken.rows > snapshot.rows)) snapshot = { rows: taken.rows, bytes: taken.bytes, heldMs: taken.heldMs, totalMs: taken.totalMs };
      }
    }
    const holders = (await watch.query<{ node: string }>(`SELECT DISTINCT node FROM shard_replicas WHERE dataset = $1 AND state = 'active' ORDER BY node`, [big.id])).rows.map((r) => r.node);
    const victim = Number(holders[0]!.slice(1)) - 1;
    const survivors = [0, 1, 2].filter((i) => i !== victim);
    const query = vectors(rng, 1)[0];
    const killedAt = performance.now();
    c.started[victim]!.child.kill('SIGKILL');
    await c.started[victim]!.exited;
    let failoverMs = -1;
    for (let k = 0; failoverMs < 0 && performance.now() - killedAt < 60_000; k++) {
      const r = await c.calls[survivors[k % 2]!]!('POST', `/datasets/${big.id}/search`, { query, top_k: 10 });
      if (r.status === 200) failoverMs = performance.now() - killedAt;
      else await new Promise((res) => setTimeout(res, 20));
    }
    // The replacement: active replicas of every shard on the two survivors.
    let catchupMs = -1;
    const settings = (await watch.query<{ shards: number }>('SELECT shards FROM cluster_datasets WHERE dataset = $1', [big.id])).rows[0]!;
    let placedAt = -1;
    while (catchupMs < 0 && performance.now() - killedAt < 300_000) {
      const { rows: r } = await watch.query<{ shard: number; node: string; state: string }>(`SELECT shard, node, state FROM shard_replicas WHERE dataset = $1 AND state <> 'dropped' AND node <> $2`, [big.id, `n${victim + 1}`]);
      if (placedAt < 0 && r.some((x) => x.state === 'initializing')) placedAt = performance.now();
      const full = Array.from({ length: settings.shards }, (_, s) => r.filter((x) => x.shard === s && x.state === 'active').length >= 2).every(Boolean);
      if (full) catchupMs = performance.now() - (placedAt < 0 ? killedAt : placedAt);
      else await new Promise((res) => setTimeout(res, 50));
    }
    return { loadSeconds, failoverMs, placedMs: placedAt < 0 ? -1 : placedAt - killedAt, catchupMs, snapshot };
  } finally {
    await watch.end();
  }
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const rng = new Rng(20261127);
  const rows: Throughput[] = [];
  let pgServer: LocalPostgres | undefined;
  let s3: LocalS3 | undefined;
  const nodes: Served[] = [];
  try {
    // The peer: the embedded service.
    {
      const n = await serve('sable-bench-cluster-');
      const call = caller(n.url, n.key);
      const ds = await must(call, 'POST', '/datasets', { name: 'bench', dim: DIM, metric: 'l2' });
      await must(call, 'POST', `/datasets/${ds.id}/ensure-engine`);
      rows.push(await measure('embedded (1 process)', [call], ds.id, o.vectors, o.queries, rng));
      console.error(`bench:cluster: ${JSON.stringify(rows.at(-1))}`);
      await n.stop();
    }
    [pgServer, s3] = await Promise.all([startPostgres(), startS3('sable')]);
    const admin = new pg.Pool({ connectionString: pgServer.url, max: 1 });
    let db = 0;
    const clusterOf = async (count: number, shards: number, replicas: number, extra: Record<string, string> = {}) => {
      // Each setup on a database of its own: nothing carries over from the previous one.
      const name = `bench${++db}`;
      await admin.query(`CREATE DATABASE ${name}`);
      const url = pgServer!.url.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
      const env = {
        SABLE_DATABASE_URL: url,
        SABLE_CLUSTER_SECRET: 'bench-cluster-secret-0123456789',
        SABLE_MASTER_KEY: 'cd'.repeat(32),
        SABLE_S3_ENDPOINT: s3!.endpoint,
        SABLE_S3_BUCKET: 'sable',
        SABLE_S3_ACCESS_KEY_ID: S3_KEY,
        SABLE_S3_SECRET_ACCESS_KEY: S3_SECRET,
        SABLE_SHARDS: String(shards),
        SABLE_REPLICAS: String(replicas),
        SABLE_NODE_LEASE_MS: '3000',
        SABLE_REPLICA_GRACE_MS: '1000',
        ...extra,
      };
      const started: Served[] = [];
      for (let i = 0; i < count; i++) {
        const host = `127.0.0.${i + 2}`;
        started.push(await serve('sable-bench-cluster-', ['--host', host, '--port', String(await freePort(host)), '--node-id', `n${i + 1}`], env));
      }
      nodes.push(...started);
      const key = started[0]!.key;
      return { started, calls: started.map((n) => caller(n.url, key)), url };
    };

    const one = await clusterOf(1, 2, 1);
    let ds = await must(one.calls[0]!, 'POST', '/datasets', { name: 'bench', dim: DIM, metric: 'l2' });
    rows.push(await measure('cluster, 1 node (2 shards x 1 replica)', one.calls, ds.id, o.vectors, o.queries, rng));
    console.error(`bench:cluster: ${JSON.stringify(rows.at(-1))}`);
    for (const n of one.started) await n.stop();
    nodes.length = 0;

    const three = await clusterOf(3, 2, 2);
    ds = await must(three.calls[0]!, 'POST', '/datasets', { name: 'bench', dim: DIM, metric: 'l2' });
    rows.push(await measure('cluster, 3 nodes (2 shards x 2 replicas)', three.calls, ds.id, o.vectors, o.queries, rng));
    console.error(`bench:cluster: ${JSON.stringify(rows.at(-1))}`);

    const byLog = await failover(three, o.catchup, rng);
    console.error(`bench:cluster: ${JSON.stringify(byLog)}`);
    for (const n of three.started) await n.stop('SIGKILL').catch(() => {});
    nodes.length = 0;
    // The same on nodes that snapshot each shard every 40 log entries: a replacement loads the
    // newest snapshot and applies the log after it.
    const snapped = await clusterOf(3, 2, 2, { SABLE_SNAPSHOT_ENTRIES: '40' });
    const bySnapshot = await failover(snapped, o.catchup, rng, true);
    console.error(`bench:cluster: ${JSON.stringify(bySnapshot)}`);
    await admin.end();

    const table = [
      '| setup | writes (vectors/s) | write p99 (ms, 100 vectors) | searches (/s) | search p99 (ms) | writes vs embedded | searches vs embedded |',
      '|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.setup} | ${r.writesPerSecond.toFixed(0)} | ${r.writeP99.toFixed(1)} | ${r.searchesPerSecond.toFixed(0)} | ${r.searchP99.toFixed(1)} | ${(r.writesPerSecond / rows[0]!.writesPerSecond).toFixed(2)}x | ${(r.searchesPerSecond / rows[0]!.searchesPerSecond).toFixed(2)}x |`,
      ),
    ];
    const md = [
      '# Cluster mode on one machine',
      '',
      `Command: \`npm run bench:cluster -- --vectors=${o.vectors} --queries=${o.queries} --catchup=${o.catchup}\`; commit ${gitCommit()}; ${cpuInfo().model}, ${cpuInfo().cores} cores; Node ${process.version}.`,
      `${DIM}-d vectors, l2, upserts of ${BATCH} and top-10 searches from ${CLIENTS} concurrent clients (round robin over the nodes). Every process shares this machine's cores: three nodes here measure the cost of the cluster's work, not the capacity of three machines.`,
      '',
      ...table,
      '',
      `Failover and catch-up (3 nodes, ${o.catchup} vectors loaded in upserts of 1000, 2 shards x 2 replicas, lease 3 s, grace 1 s):`,
      '',
      '| replicas built from | load (s) | kill -9 to a search through a survivor | placed after the kill | placed to every shard in sync | snapshot taken (rows, MB, replica held, whole) |',
      '|---|---|---|---|---|---|',
      ...[byLog, bySnapshot].map((f) => `| ${f.snapshot ? 'the newest snapshot + the log after it' : 'the whole log'} | ${f.loadSeconds.toFixed(1)} | ${f.failoverMs.toFixed(0)} ms | ${f.placedMs < 0 ? '-' : `${(f.placedMs / 1000).toFixed(2)} s`} | ${f.catchupMs < 0 ? 'not reached in 300 s' : `${(f.catchupMs / 1000).toFixed(2)} s`} | ${f.snapshot ? `${f.snapshot.rows} rows, ${(f.snapshot.bytes / 1e6).toFixed(1)} MB, ${f.snapshot.heldMs.toFixed(0)} ms, ${f.snapshot.totalMs.toFixed(0)} ms` : '-'} |`),
      '',
    ].join('\n');
    const out = join(paths.root, 'bench', 'results', 'cluster.md');
    writeFileSync(out, md);
    console.log(md);
    console.error(`bench:cluster: wrote ${out}`);
  } finally {
    for (const n of nodes) await n.stop('SIGKILL').catch(() => {});
    await s3?.stop();
    await pgServer?.stop();
  }
}

await main();
