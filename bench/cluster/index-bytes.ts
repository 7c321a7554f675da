/**
 * Inputs of docs/capacity.md: what one vector costs an embedded dataset (a shard replica is one),
 * by index type and dimension, in memory and on disk, and what a search costs one thread.
 *
 *   node dist/bench/cluster/index-bytes.js [--small=10000] [--large=30000] [--dims=768,1536,1536i] [--queries=200]
 *
 * For each dimension and index type (sable, ivf, hnsw, flat; cosine, engine defaults) a durable
 * engine in a temporary directory loads `small` then, in a fresh process, `large` vectors of the
 * bench's synthetic clustered set (bench/ann/datasets.ts; 1536-d rows: see rows()), flushes into one sealed partition and waits for the index. Per vector = the
 * difference between the two sizes over the rows added, so fixed costs (centroids, LMDB pages,
 * the process) drop out. Read: stats().memory_bytes (the engine's own accounting of segment
 * memory), anonymous RSS growth (RssAnon, after a GC), LMDB's sable.mdb blocks and the
 * partition's snapshot file (segments/*.seg). At `large`, one-thread searchBatch QPS with the
 * engine's defaults and recall@10 against the flat (exact) index's answers.
 *
 * Writes results/capacity-inputs.md (with log-appends.ts's table when present).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IndexType } from '../../engine/index.js';
import { SyntheticGenerator } from '../ann/datasets.js';
import { Rng } from '../../testkit/rng.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { loadSable } from '../ann/libs/sable.js';

const TYPES: IndexType[] = ['flat', 'sable', 'ivf', 'hnsw'];

interface One {
  dim: number;
  type: IndexType;
  n: number;
  queries: number;
  /** Rows (then queries) as raw float32, generated once by the parent (scale mode). */
  file?: string;
  /** Search passes (best of); default 3. */
  passes?: number;
  /** How 1536-d rows are made (see rows()). */
  halves?: Halves;
}

interface Measured extends One {
  buildSeconds: number;
  memoryBytes: number;
  anonBytes: number;
  lmdbBytes: number;
  segBytes: number;
  partitions: number;
  qps?: number;
  /** Ids of each query's top 10 (for recall against flat). */
  top?: number[][];
}

function rssAnon(): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * `count` rows of `dim` (768 or 1536). 1536-d rows are a 768-d point x beside a second half:
 * `same`, a fixed signed permutation of x (an orthogonal map: the neighbours of the 768-d set,
 * twice the dimension, so what the dimension alone costs); `independent`, another point of the
 * generator (two independent clustered halves: a set of higher intrinsic dimension, harder).
 */
function rows(gen: SyntheticGenerator, dim: number, stream: number, count: number, halves: Halves = 'same'): Float32Array {
  const out = new Float32Array(count * dim);
  const part = new Float32Array(count * 768);
  gen.fill(part, stream, 0, count);
  if (dim === 768) return part;
  if (dim !== 1536) throw new Error(`dim ${dim}: 768 or 1536`);
  const second = new Float32Array(count * 768);
  if (halves === 'independent') gen.fill(second, stream + 2, 0, count);
  else {
    const rng = new Rng(1536);
    const perm = Array.from({ length: 768 }, (_, i) => i);
    for (let i = 767; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [perm[i], perm[j]] = [perm[j]!, perm[i]!];
    }
    const sign = Array.from({ length: 768 }, () => (rng.next() < 0.5 ? -1 : 1));
    for (let i = 0; i < count; i++) for (let d = 0; d < 768; d++) second[i * 768 + d] = sign[d]! * part[i * 768 + perm[d]!]!;
  }
  for (let i = 0; i < count; i++) {
    out.set(part.subarray(i * 768, (i + 1) * 768), i * dim);
    out.set(second.subarray(i * 768, (i + 1) * 768), i * dim + 768);
  }
  return out;
}

type Halves = 'same' | 'independent';

/** Allocated bytes of a file (sparse LMDB maps count only what is written). */
function blocks(path: string): number {
  return existsSync(path) ? statSync(path).blocks * 512 : 0;
}

async function measureOne(o: One): Promise<Measured> {
  const mod = await loadSable();
  const gen = new SyntheticGenerator();
  let data: Float32Array;
  let queries: Float32Array;
  if (o.file) {
    const b = readFileSync(o.file);
    const all = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    const total = all.length / o.dim - o.queries;
    data = all.subarray(0, o.n * o.dim);
    queries = all.subarray(total * o.dim);
  } else {
    data = rows(gen, o.dim, 0, o.n, o.halves);
    queries = rows(gen, o.dim, 1, o.queries, o.halves);
  }
  const dir = mkdtempSync(join(tmpdir(), 'sable-capacity-'));
  try {
    gc();
    const anon0 = rssAnon();
    const engine = await mod.Engine.open({ path: dir });
    const ds = await engine.createDataset({
      name: `cap-${o.type}-${o.dim}`,
      dim: o.dim,
      metric: 'cosine',
      indexType: o.type,
      promotion: { max_buffer_vectors: 10_000_000, max_buffer_age_ms: 3_600_000 },
    });
    const t0 = performance.now();
    const chunk = 5_000;
    for (let first = 0; first < o.n; first += chunk) {
      const count = Math.min(chunk, o.n - first);
      await ds.upsert(Float64Array.from({ length: count }, (_, i) => first + i + 1), data.subarray(first * o.dim, (first + count) * o.dim));
    }
    await ds.flush();
    for (let i = 0; ds.stats().index_status !== 'ready' && i < 6000; i++) await new Promise((r) => setTimeout(r, 50));
    const buildSeconds = (performance.now() - t0) / 1000;
    const st = ds.stats();
    if (st.vector_count !== o.n || st.growing_vectors !== 0 || st.index_status !== 'ready') throw new Error(`${o.type} ${o.dim}: ${JSON.stringify(st)}`);
    await new Promise((r) => setTimeout(r, 1000));
    gc();
    const anonBytes = rssAnon() - anon0;
    const segs = join(dir, 'segments');
    const segBytes = readdirSync(segs).reduce((s, f) => s + blocks(join(segs, f)), 0);
    const lmdbBytes = blocks(join(dir, 'sable.mdb'));
    const out: Measured = { ...o, buildSeconds, memoryBytes: st.memory_bytes, anonBytes, lmdbBytes, segBytes, partitions: st.partitions };
    if (o.queries > 0) {
      let best = Infinity;
      let hits: { id: number }[][] = [];
      for (let pass = 0; pass < (o.passes ?? 3); pass++) {
        const t = performance.now();
        hits = await ds.searchBatch(queries, { topK: 10, threads: 1, includeMetadata: false });
        best = Math.min(best, performance.now() - t);
      }
      out.qps = o.queries / (best / 1000);
      out.top = hits.map((h) => h.map((x) => x.id));
    }
    await engine.close();
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs one measurement in a fresh process (its RSS its own). */
function inChild(o: One): Measured {
  const out = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), `--one=${JSON.stringify(o)}`], { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').at(-1)!) as Measured;
}

/** Replaces the text between two markers of results/capacity-inputs.md (added at the end when absent). */
function writeSection(mark: string, end: string, text: string): void {
  const out = join(paths.results, 'capacity-inputs.md');
  let md = existsSync(out) ? readFileSync(out, 'utf8') : '# Capacity inputs (docs/capacity.md)\n';
  if (!md.includes(mark)) md += '\n' + mark + '\n' + end + '\n';
  md = md.slice(0, md.indexOf(mark) + mark.length) + '\n' + text + md.slice(md.indexOf(end));
  writeFileSync(out, md);
}

function recall(a: number[][], exact: number[][]): number {
  let hit = 0;
  let all = 0;
  for (let q = 0; q < exact.length; q++) {
    const truth = new Set(exact[q]);
    for (const id of a[q]!) if (truth.has(id)) hit++;
    all += exact[q]!.length;
  }
  return hit / all;
}

/**
 * Scale mode (--scale=50000,100000,...): the default index's one-thread QPS and recall@10 (against
 * flat at the same size) as a partition grows, 768-d, to fit how search cost grows with rows.
 */
async function scale(sizes: number[], nq: number): Promise<string> {
  const dim = 768;
  const largest = Math.max(...sizes);
  const file = join(paths.cache, 'capacity', `synthetic-${largest}-${nq}.f32`);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const gen = new SyntheticGenerator();
    const out = new Float32Array((largest + nq) * dim);
    for (let first = 0; first < largest; first += 20_000) gen.fill(out.subarray(first * dim), 0, first, Math.min(20_000, largest - first));
    gen.fill(out.subarray(largest * dim), 1, 0, nq);
    writeFileSync(file, new Uint8Array(out.buffer));
  }
  const lines: string[] = [];
  for (const n of sizes) {
    // Rows are a prefix of the file; the queries are its tail (the child finds them there).
    const f = inChild({ dim, type: 'flat', n, queries: nq, file, passes: 1 });
    const s = inChild({ dim, type: 'sable', n, queries: nq, file });
    const line = `| ${n.toLocaleString('en-US')} | ${s.buildSeconds.toFixed(1)} | ${(s.memoryBytes / n).toFixed(0)} | ${s.qps!.toFixed(0)} | ${(1e6 / s.qps!).toFixed(0)} | ${recall(s.top!, f.top!).toFixed(3)} | ${f.qps!.toFixed(0)} |`;
    console.error(line);
    lines.push(line);
  }
  return [
    '| rows (one partition) | build s | memory_bytes / row | QPS 1 thread (default) | µs per query | recall@10 vs flat | flat QPS 1 thread |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...lines,
  ].join('\n');
}

async function main(): Promise<void> {
  const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, ...v]) => [k, v.join('=')]));
  if (args.one) {
    console.log(JSON.stringify(await measureOne(JSON.parse(args.one) as One)));
    return;
  }
  if (args.scale) {
    const sizes = args.scale.split(',').map(Number);
    const nq = Number(args.queries ?? 200);
    const t0 = performance.now();
    const load0 = loadavg()[0]!;
    const body = await scale(sizes, nq);
    const cpu = cpuInfo();
    const table = [
      `## Search cost as a partition grows (\`node dist/bench/cluster/index-bytes.js --scale=${args.scale} --queries=${nq}\`)`,
      '',
      `Commit ${gitCommit()}; ${cpu.model}, ${cpu.cores} shared cores (load ${load0.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end); Node ${process.version}; ${((performance.now() - t0) / 1000).toFixed(0)} s. The synthetic clustered 768-d set (bench/ann/datasets.ts), cosine, index type sable with the engine's defaults (its default nprobe is calibrated for recall@10 about 0.95-0.97), one sealed partition per size, each in a fresh process; ${nq} queries in one searchBatch, one thread, best of 3.`,
      '',
      body,
      '',
    ].join('\n');
    writeSection('<!-- scale -->', '<!-- /scale -->', table);
    console.log(table);
    return;
  }
  const small = Number(args.small ?? 10_000);
  const large = Number(args.large ?? 30_000);
  const nq = Number(args.queries ?? 200);
  // 1536: the 768-d set's neighbours at twice the dimension; 1536i: two independent halves.
  const dims = (args.dims ?? '768,1536,1536i').split(',');
  const t0 = performance.now();
  const load0 = loadavg()[0]!;
  const lines: string[] = [];
  for (const label of dims) {
    const dim = parseInt(label, 10);
    const halves: Halves = label.endsWith('i') ? 'independent' : 'same';
    let exact: number[][] | undefined;
    for (const type of TYPES) {
      const a = inChild({ dim, type, n: small, queries: 0, halves });
      const b = inChild({ dim, type, n: large, queries: nq, halves });
      if (type === 'flat') exact = b.top;
      const per = (k: keyof Measured) => ((b[k] as number) - (a[k] as number)) / (large - small);
      const name = dim === 768 ? '768' : halves === 'same' ? '1536 (x, Px)' : '1536 (two points)';
      const line = `| ${name} | ${type} | ${per('memoryBytes').toFixed(0)} | ${per('anonBytes').toFixed(0)} | ${per('lmdbBytes').toFixed(0)} | ${per('segBytes').toFixed(0)} | ${b.partitions} | ${b.buildSeconds.toFixed(1)} | ${b.qps!.toFixed(0)} | ${recall(b.top!, exact!).toFixed(3)} |`;
      console.error(line);
      lines.push(line);
    }
  }
  const cpu = cpuInfo();
  const table = [
    `## Bytes per vector and one-thread search (\`node dist/bench/cluster/index-bytes.js --small=${small} --large=${large} --queries=${nq}\`)`,
    '',
    `Commit ${gitCommit()}; ${cpu.model}, ${cpu.cores} shared cores (load ${load0.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end); Node ${process.version}; ${((performance.now() - t0) / 1000).toFixed(0)} s. Synthetic clustered vectors (bench/ann/datasets.ts), cosine. 1536 (x, Px): a 768-d point beside a fixed signed permutation of itself (the 768-d set's neighbours at twice the dimension: what the dimension alone costs); 1536 (two points): two independent 768-d points side by side (a set of higher intrinsic dimension, harder for any index). Engine defaults, one sealed partition. Bytes per vector = (figure at ${large} − figure at ${small}) / ${large - small}, each size in a fresh process. QPS: ${nq} queries in one searchBatch, one thread, best of 3, at ${large} rows; recall@10 against the flat index's answers.`,
    '',
    '| dim | index | stats().memory_bytes / vector | anon RSS / vector | LMDB sable.mdb / vector | snapshot .seg / vector | partitions | build s (large) | QPS 1 thread (large) | recall@10 vs flat |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...lines,
    '',
  ].join('\n');
  writeSection('<!-- index-bytes -->', '<!-- /index-bytes -->', table);
  console.log(table);
}

await main();
