/**
 * `npm run bench:writes`: durable write throughput of one dataset, one writer against many.
 *
 * Every acknowledged write is synced to disk, so one writer is bound by the disk's sync latency;
 * with group commit, writers that wait together share a sync. Measured in the same run, on a
 * real disk (bench/.cache, not a tmpfs), through the embedded API (the service adds its HTTP
 * work on top; the soak measures that mix):
 *   - sable, 1 writer, then N writers: upserts of 10 vectors (768-d), and a mix with deletes;
 *   - the peer: lmdb-js itself (the storage sable writes through), the same bytes (10 rows a
 *     write) with one transaction per write awaited by 1 writer and by N writers, so lmdb-js
 *     batches whatever is queued into one commit. That is the storage's own ceiling for this
 *     write pattern; sable adds its segments, metadata and membership records.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { Engine } from '../../engine/index.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { Rng } from '../../testkit/rng.js';
import { percentiles } from '../http/stats.js';

const DIM = 768;
const ROWS_PER_WRITE = 10;

interface Options {
  seconds: number;
  writers: number;
}

function parse(argv: string[]): Options {
  const o: Options = { seconds: 10, writers: 64 };
  for (const a of argv) {
    const [k, v] = a.replace(/^--/, '').split('=');
    if (k === 'seconds') o.seconds = Number(v);
    else if (k === 'writers') o.writers = Number(v);
    else if (k === 'help') {
      console.log('npm run bench:writes -- [--seconds=10] [--writers=64]');
      process.exit(0);
    } else throw new Error(`unknown flag ${a}`);
  }
  return o;
}

interface Measured {
  what: string;
  writers: number;
  writes: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** Runs `write(writer, n)` from `writers` closed-loop writers for `seconds`. */
async function drive(what: string, writers: number, seconds: number, write: (writer: number, n: number) => Promise<unknown>): Promise<Measured> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let n = 0; performance.now() < until; n++) {
        const s = performance.now();
        await write(w, n);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const [p50, p99] = percentiles(Float64Array.from(latencies), [0.5, 0.99]);
  const m = { what, writers, writes: latencies.length, perSecond: latencies.length / elapsed, p50: p50!, p99: p99! };
  console.error(`${what.padEnd(34)} ${String(writers).padStart(3)} writers  ${m.perSecond.toFixed(0).padStart(6)} writes/s  p50 ${m.p50.toFixed(1)} ms  p99 ${m.p99.toFixed(1)} ms`);
  return m;
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const root = join(paths.cache, 'writes');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const rng = new Rng(7);
  const pool = new Float32Array(1000 * DIM);
  for (let i = 0; i < pool.length; i++) pool[i] = rng.gauss();
  const rowsOf = (n: number) => {
    const at = ((n * ROWS_PER_WRITE) % (1000 - ROWS_PER_WRITE)) * DIM;
    return pool.slice(at, at + ROWS_PER_WRITE * DIM);
  };
  const results: Measured[] = [];

  const engine = await Engine.open({ path: join(root, 'sable') });
  const ds = await engine.createDataset({ name: 'writes', dim: DIM, metric: 'cosine' });
  // Ids per writer and write, so writers never touch the same id (a write of 10 new rows).
  const idsOf = (writer: number, n: number, base: number) =>
    Array.from({ length: ROWS_PER_WRITE }, (_, i) => base + (writer * 1_000_000 + n) * ROWS_PER_WRITE + i);
  const meta = Array.from({ length: ROWS_PER_WRITE }, (_, i) => ({ year: 2000 + i, lang: i % 2 ? 'en' : 'de' }));
  let phase = 0;
  for (const writers of [1, o.writers]) {
    const base = ++phase * 1e11;
    results.push(await drive('sable upsert (10 x 768)', writers, o.seconds, (w, n) => ds.upsert(idsOf(w, n, base), rowsOf(n), meta)));
  }
  // Churn: every other write of a writer deletes the rows of its write before.
  for (const writers of [1, o.writers]) {
    const base = ++phase * 1e11;
    results.push(
      await drive('sable upsert + delete', writers, o.seconds, (w, n) =>
        n % 2 === 1 ? ds.delete(idsOf(w, n - 1, base)) : ds.upsert(idsOf(w, n, base), rowsOf(n), meta),
      ),
    );
  }
  await engine.close();

  const db = open({ path: join(root, 'lmdb-peer'), maxDbs: 4 });
  const vectors = db.openDB({ name: 'vectors', encoding: 'binary' });
  for (const writers of [1, o.writers]) {
    const base = ++phase * 1e11;
    results.push(
      await drive('lmdb-js put (10 x 768 floats)', writers, o.seconds, (w, n) => {
        const rows = rowsOf(n);
        const ids = idsOf(w, n, base);
        return db.transaction(() => {
          for (let i = 0; i < ROWS_PER_WRITE; i++) vectors.put([1, ids[i]!], new Uint8Array(rows.buffer, i * DIM * 4, DIM * 4));
        });
      }),
    );
  }
  await db.close();
  rmSync(root, { recursive: true, force: true });
  report(o, results);
}

function report(o: Options, results: Measured[]): void {
  const rate = (what: string, writers: number) => results.find((r) => r.what.startsWith(what) && r.writers === writers)!.perSecond;
  const cpu = cpuInfo();
  const L: string[] = [];
  L.push('# Durable writes: one writer against many (`npm run bench:writes`)', '');
  L.push(`Commit ${gitCommit()}, ${new Date().toISOString().slice(0, 10)}, ${cpu.model} (${cpu.cores} cores), ${o.seconds} s a case, data on the repository's disk.`);
  L.push('Every write is acknowledged once synced. Embedded API; one dataset, 768-d cosine, 10 rows a write with two metadata fields.', '');
  L.push('| case | writers | writes | writes/s | p50 ms | p99 ms |', '| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const r of results) L.push(`| ${r.what} | ${r.writers} | ${r.writes} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`);
  L.push('');
  const n = o.writers;
  L.push(`- sable, ${n} writers against 1: ${(rate('sable upsert (', n) / rate('sable upsert (', 1)).toFixed(1)}x (upserts), ${(rate('sable upsert +', n) / rate('sable upsert +', 1)).toFixed(1)}x (with deletes).`);
  L.push(`- lmdb-js alone, ${n} writers against 1: ${(rate('lmdb-js', n) / rate('lmdb-js', 1)).toFixed(1)}x.`);
  L.push(`- sable against lmdb-js alone, ${n} writers: ${(rate('sable upsert (', n) / rate('lmdb-js', n)).toFixed(2)}x; 1 writer: ${(rate('sable upsert (', 1) / rate('lmdb-js', 1)).toFixed(2)}x.`);
  const md = L.join('\n') + '\n';
  mkdirSync(paths.results, { recursive: true });
  writeFileSync(join(paths.results, 'writes.md'), md);
  writeFileSync(join(paths.results, 'writes.json'), JSON.stringify({ commit: gitCommit(), options: o, results }, null, 2) + '\n');
  console.log(md);
}

await main();
