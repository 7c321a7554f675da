/**
 * Inputs of docs/capacity.md: how fast the local PostgreSQL takes the cluster's vector-log
 * appends, through the code a router runs (cluster/shard-log.ts appendWrite: one transaction per
 * write, one entry per touched shard under its shard_heads row lock, encoded by log-entry.ts).
 *
 *   node dist/bench/cluster/log-appends.js [--seconds=7] [--clients=8] [--shards=16] [--dim=768]
 *
 * A PostgreSQL of its own (testkit/postgres.ts) with the schema of migration 0001 only; upserts
 * of 1, 100 and 1000 vectors (ids spread over the shards by the real shardOf) from `clients`
 * concurrent writers for `seconds` each, twice: with the test settings (fsync,
 * synchronous_commit, full_page_writes off) and durable (all three on: every commit waits for
 * its WAL flush on this machine's disk). After each run: the log's bytes per vector on disk
 * (table + TOAST + indexes), then the log is emptied.
 *
 * Writes its section of results/capacity-inputs.md.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import clusterCore from '../../outbound/postgres/migrations/0001-cluster-core.js';
import { migrate } from '../../outbound/postgres/migrations.js';
import { openPool, type Pool } from '../../outbound/postgres/pool.js';
import { appendWrite, createShards, encodeEntry } from '../../cluster/shard-log.js';
import { startPostgres } from '../../testkit/postgres.js';
import { Rng } from '../../testkit/rng.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { percentiles } from '../http/stats.js';

interface Row {
  mode: string;
  batch: number;
  writes: number;
  entries: number;
  vectors: number;
  seconds: number;
  p50: number;
  p99: number;
  logBytes: number;
  diskBytes: number;
}

const DATASET = 'capacity';

async function run(pool: Pool, mode: string, batch: number, o: { seconds: number; clients: number; shards: number; dim: number }, data: Float32Array): Promise<Row> {
  let nextId = 1;
  let writes = 0;
  let entries = 0;
  const latencies: number[] = [];
  const end = performance.now() + o.seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.clients }, async (_, c) => {
      for (let k = 0; performance.now() < end; k++) {
        const first = nextId;
        nextId += batch;
        const ids = Float64Array.from({ length: batch }, (_, i) => first + i);
        const at = ((first * 7) % 1000) * o.dim;
        const vectors = data.subarray(at, at + batch * o.dim);
        const t = performance.now();
        const appended = await appendWrite(pool, DATASET, o.shards, { op: 'upsert', ids, vectors, dim: o.dim }, `${mode}-${batch}-${c}-${k}`);
        latencies.push(performance.now() - t);
        writes++;
        entries += appended.length;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const { rows } = await pool.query<{ n: string; bytes: string; disk: string }>(
    `SELECT count(*) AS n, coalesce(sum(octet_length(body)), 0) AS bytes, pg_total_relation_size('vector_log') AS disk FROM vector_log`,
  );
  const vectors = nextId - 1;
  const r = rows[0]!;
  if (Number(r.n) !== entries) throw new Error(`${entries} entries appended, ${r.n} in the log`);
  await pool.query('TRUNCATE vector_log');
  const [p50, p99] = percentiles(Float64Array.from(latencies), [0.5, 0.99]);
  // Vectors actually written: writes that started before the end all finished.
  const written = writes * batch;
  return { mode, batch, writes, entries, vectors: written, seconds, p50: p50!, p99: p99!, logBytes: Number(r.bytes) / written, diskBytes: Number(r.disk) / Math.max(1, vectors) };
}

async function main(): Promise<void> {
  const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
  const o = { seconds: Number(args.seconds ?? 7), clients: Number(args.clients ?? 8), shards: Number(args.shards ?? 16), dim: Number(args.dim ?? 768) };
  const rng = new Rng(32);
  // 2000 rows of random floats (incompressible, as embeddings are to pglz); writes take windows of it.
  const data = Float32Array.from({ length: 2000 * o.dim }, () => rng.next() * 2 - 1);
  const load0 = loadavg()[0]!;
  const t0 = performance.now();
  const rows: Row[] = [];
  const modes: [string, Record<string, string>][] = [
    ['test settings (fsync off)', {}],
    ['durable (fsync, synchronous_commit, full_page_writes on)', { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' }],
  ];
  for (const [mode, settings] of modes) {
    const server = await startPostgres({ settings });
    const pool = openPool(server.url, { max: o.clients });
    try {
      await migrate(pool, [clusterCore]);
      await createShards(pool, DATASET, o.shards);
      for (const batch of [1, 100, 1000]) {
        const row = await run(pool, mode, batch, o, data);
        console.error(`log-appends: ${JSON.stringify(row)}`);
        rows.push(row);
      }
    } finally {
      await pool.end();
      await server.stop();
    }
  }
  const entrySize = (n: number, dim: number) => encodeEntry({ op: 'upsert', ids: Float64Array.from({ length: n }, (_, i) => 1e9 + i), vectors: new Float32Array(n * dim), dim }).byteLength;
  const deleteSize = (n: number) => encodeEntry({ op: 'delete', ids: Float64Array.from({ length: n }, (_, i) => 1e9 + i) }).byteLength;
  const cpu = cpuInfo();
  const table = [
    `## Vector-log appends on the local PostgreSQL (\`node dist/bench/cluster/log-appends.js --seconds=${o.seconds} --clients=${o.clients} --shards=${o.shards} --dim=${o.dim}\`)`,
    '',
    `Commit ${gitCommit()}; ${cpu.model}, ${cpu.cores} shared cores: PostgreSQL 15, the writers and everything else on the machine share them (load ${load0.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end); Node ${process.version}; ${((performance.now() - t0) / 1000).toFixed(0)} s. appendWrite (cluster/shard-log.ts) from ${o.clients} concurrent writers, one dataset of ${o.shards} shards, upserts of ${o.dim}-d vectors without metadata, ${o.seconds} s per row. A write of 1 vector touches 1 shard; of 100 or 1000, nearly all ${o.shards} (one entry and one NOTIFY each, one transaction).`,
    '',
    '| PostgreSQL | vectors per write | writes (transactions)/s | log entries/s | vectors/s | MiB/s of entries | write p50 ms | write p99 ms | entry bytes / vector | log on disk / vector (table + TOAST + indexes) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.batch} | ${(r.writes / r.seconds).toFixed(0)} | ${(r.entries / r.seconds).toFixed(0)} | ${(r.vectors / r.seconds).toFixed(0)} | ${((r.vectors * r.logBytes) / r.seconds / 1048576).toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.logBytes.toFixed(0)} | ${r.diskBytes.toFixed(0)} |`,
    ),
    '',
    `Encoded entry sizes (log-entry.ts, computed): upsert of 1 vector: ${entrySize(1, 768)} B at 768-d, ${entrySize(1, 1536)} B at 1536-d; of 100: ${entrySize(100, 768)} / ${entrySize(100, 1536)} B; delete of 1 id: ${deleteSize(1)} B, of 100: ${deleteSize(100)} B. (ids float64, vectors float32, msgpack map; metadata adds its msgpack size.)`,
    '',
  ].join('\n');
  const out = join(paths.results, 'capacity-inputs.md');
  const MARK = '<!-- log-appends -->';
  const END = '<!-- /log-appends -->';
  let md = existsSync(out) ? readFileSync(out, 'utf8') : '# Capacity inputs (docs/capacity.md)\n';
  if (!md.includes(MARK)) md += '\n' + MARK + '\n' + END + '\n';
  md = md.slice(0, md.indexOf(MARK) + MARK.length) + '\n' + table + md.slice(md.indexOf(END));
  writeFileSync(out, md);
  console.log(table);
}

await main();
