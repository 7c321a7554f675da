// Exact ground truth by brute force (C++ tool or JS worker threads, double precision), cached in
// bench/.cache/gt/ per set, size and query count: the unfiltered top-k and the top-k under each
// filter `bucket < T` used by sable's filtered cases; for bench:ann:matrix, the top k once a share
// of the rows is deleted, read off a deeper list.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BUCKETS, type SetName } from './config.js';
import { basePath, loadSet, queriesPath, type LoadedSet } from './datasets.js';
import type { GtWorkerInput, GtWorkerOutput } from './gt-worker.js';
import { bucketOf, isDeleted, rowNorms, thresholdFor, type GroundTruth } from './metrics.js';
import { ensureDir, paths } from './paths.js';

const GT_FORMAT = 1;

export function gtPath(set: SetName, n: number, nq: number, k: number, metaNq: number): string {
  return join(paths.gt, `${set}-n${n}-q${nq}-k${k}-held${metaNq}-v${GT_FORMAT}.json`);
}

export function readGroundTruth(file: string): GroundTruth {
  return JSON.parse(readFileSync(file, 'utf8')) as GroundTruth;
}

/** Written then renamed: an interrupted run never leaves a file that looks complete. */
function saveGroundTruth(gt: GroundTruth, file: string): void {
  ensureDir(paths.gt);
  writeFileSync(`${file}.tmp`, JSON.stringify(gt));
  renameSync(`${file}.tmp`, file);
}

/**
 * The unfiltered top `k` of `deep` (a ground truth with a larger k) once the ids isDeleted(id,
 * share) picks are gone, written next to it; share 0 keeps every row. Exact as long as `k`
 * survivors remain in each deep list (the rows past it are farther than all of them): fails
 * when one does not rather than answer a shorter truth.
 */
export function groundTruthAfterDeletes(deep: GroundTruth, deepFile: string, k: number, share: number): string {
  const file = deepFile.replace(/-k\d+-/, `-k${k}-of${deep.k}-del${Math.round(share * 100)}-`);
  const src = deep.cases.find((c) => c.threshold === null)!;
  let live = 0;
  for (let r = 0; r < deep.n; r++) if (!isDeleted(r, share)) live++;
  const ids: number[][] = [];
  const dists: number[][] = [];
  src.ids.forEach((row, q) => {
    const keep = row.flatMap((id, i) => (isDeleted(id, share) ? [] : [i])).slice(0, k);
    if (keep.length < Math.min(k, live)) {
      throw new Error(`${deep.set} n=${deep.n} query ${q}: ${keep.length} of its exact top ${deep.k} survive the ${share * 100}% deletes, fewer than ${k}: compute a deeper ground truth`);
    }
    ids.push(keep.map((i) => row[i]!));
    dists.push(keep.map((i) => src.dists[q]![i]!));
  });
  const name = share > 0 ? `all, ${Math.round(share * 100)}% deleted` : 'all';
  const gt: GroundTruth = {
    ...deep,
    k,
    cases: [{ name, selectivity: live / deep.n, matching: live, threshold: null, ...(share > 0 ? { deletedShare: share } : {}), ids, dists }],
  };
  saveGroundTruth(gt, file);
  return file;
}

/** Compute (or read from the cache) the ground truth for the first n vectors and nq queries. */
export async function ensureGroundTruth(
  set: SetName,
  n: number,
  nq: number,
  k: number,
  selectivities: number[],
  threads: number,
  tool: string | null,
): Promise<{ file: string; gt: GroundTruth; cached: boolean }> {
  const data = loadSet(set, n, nq, !tool);
  const file = gtPath(set, data.n, nq, k, data.meta.nq);
  const wanted = [null, ...[...selectivities].sort((a, b) => b - a).map(thresholdFor)];
  if (existsSync(file)) {
    const gt = readGroundTruth(file);
    const have = new Set(gt.cases.map((c) => c.threshold));
    if (wanted.every((t) => have.has(t))) return { file, gt, cached: true };
  }
  const { dim, metric } = data.meta;
  const t0 = Date.now();
  process.stderr.write(
    `[gt] ${set}: brute force ${nq} queries x ${data.n} vectors (${dim}-d, ${metric}) on ${threads} threads (${tool ? 'C++' : 'JS'}), once (cached)\n`,
  );
  const parts = tool ? await viaTool(tool, set, data.n, data.meta.dim, nq, k, metric, wanted, threads) : await viaWorkers(data, nq, k, wanted, threads);
  parts.sort((a, b) => a.qStart - b.qStart);
  const counts = new Map<number, number>();
  for (let r = 0; r < data.n; r++) {
    const b = bucketOf(r);
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  const matching = (t: number | null) => {
    if (t === null) return data.n;
    let c = 0;
    for (let b = 0; b < t; b++) c += counts.get(b) ?? 0;
    return c;
  };
  const gt: GroundTruth = {
    set,
    n: data.n,
    nq,
    k,
    metric,
    cases: wanted.map((t, c) => ({
      name: t === null ? 'all' : `bucket<${t}`,
      selectivity: t === null ? 1 : t / BUCKETS,
      matching: matching(t),
      threshold: t,
      ids: parts.flatMap((p) => p.ids[c]!),
      dists: parts.flatMap((p) => p.dists[c]!),
    })),
  };
  saveGroundTruth(gt, file);
  process.stderr.write(`[gt] ${set}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  return { file, gt, cached: false };
}

/** The C++ brute force (bench/ann/groundtruth.cpp): same definition, about 20x faster. */
async function viaTool(
  tool: string,
  set: SetName,
  n: number,
  dim: number,
  nq: number,
  k: number,
  metric: string,
  thresholds: (number | null)[],
  threads: number,
): Promise<GtWorkerOutput[]> {
  const stamp = join(ensureDir(paths.tmp), `gt-${set}-${process.pid}`);
  const buckets = new Uint16Array(n);
  for (let r = 0; r < n; r++) buckets[r] = bucketOf(r);
  writeFileSync(`${stamp}.buckets`, new Uint8Array(buckets.buffer));
  const args = {
    base: basePath(set),
    n,
    dim,
    queries: queriesPath(set),
    nq,
    k,
    metric,
    buckets: `${stamp}.buckets`,
    thresholds: thresholds.filter((t) => t !== null).join(','),
    threads,
    out: `${stamp}.out`,
  };
  await new Promise<void>((resolve, reject) => {
    const p = spawn(tool, Object.entries(args).flatMap(([key, v]) => [`--${key}`, String(v)]), { stdio: ['ignore', 'inherit', 'inherit'] });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`groundtruth exited with ${code}`))));
  });
  const buf = readFileSync(`${stamp}.out`);
  unlinkSync(`${stamp}.out`);
  unlinkSync(`${stamp}.buckets`);
  const rec = k * 4 + k * 8;
  const out: GtWorkerOutput = { qStart: 0, ids: [], dists: [] };
  for (let c = 0; c < thresholds.length; c++) {
    const ids: number[][] = [];
    const dists: number[][] = [];
    for (let q = 0; q < nq; q++) {
      const off = (c * nq + q) * rec;
      const row: number[] = [];
      const drow: number[] = [];
      for (let i = 0; i < k; i++) {
        const id = buf.readInt32LE(off + i * 4);
        if (id < 0) break;
        row.push(id);
        drow.push(buf.readDoubleLE(off + k * 4 + i * 8));
      }
      ids.push(row);
      dists.push(drow);
    }
    out.ids.push(ids);
    out.dists.push(dists);
  }
  return [out];
}

/** The pure-JS brute force on worker threads (used when the C++ tool cannot be compiled). */
async function viaWorkers(data: LoadedSet, nq: number, k: number, wanted: (number | null)[], threads: number): Promise<GtWorkerOutput[]> {
  const { dim, metric } = data.meta;
  const set = data.meta.name;
  let baseNorms: Float64Array | null = null;
  if (metric === 'cosine') {
    const norms = rowNorms(data.base, dim);
    baseNorms = new Float64Array(new SharedArrayBuffer(norms.byteLength));
    baseNorms.set(norms);
  }
  const per = Math.ceil(nq / threads);
  const parts = await Promise.all(
    Array.from({ length: threads }, (_, w) => {
      const input: GtWorkerInput = {
        base: data.base,
        queries: data.queries,
        baseNorms,
        dim,
        n: data.n,
        metric,
        k,
        thresholds: wanted,
        qStart: Math.min(nq, w * per),
        qEnd: Math.min(nq, (w + 1) * per),
      };
      return new Promise<GtWorkerOutput>((resolve, reject) => {
        const worker = new Worker(paths.gtWorker, { workerData: input });
        let last = Date.now();
        worker.on('message', (m: { progress?: number; done?: GtWorkerOutput }) => {
          if (m.done) resolve(m.done);
          else if (w === 0 && m.progress !== undefined && Date.now() - last > 10_000) {
            last = Date.now();
            process.stderr.write(`[gt] ${set}: ${Math.round((100 * m.progress) / (input.qEnd - input.qStart))}%\n`);
          }
        });
        worker.on('error', reject);
        worker.on('exit', (code) => {
          if (code !== 0) reject(new Error(`ground-truth worker exited with ${code}`));
        });
      });
    }),
  );
  return parts;
}
