// Exact ground truth by brute force (worker threads, double precision), cached in
// bench/.cache/gt/ per set, size and query count: the unfiltered top-k and the top-k under each
// filter `bucket < T` used by sable's filtered cases.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BUCKETS, type SetName } from './config.js';
import { loadSet } from './datasets.js';
import type { GtWorkerInput, GtWorkerOutput } from './gt-worker.js';
import { bucketOf, rowNorms, thresholdFor, type GroundTruth } from './metrics.js';
import { ensureDir, paths } from './paths.js';

const GT_FORMAT = 1;

export function gtPath(set: SetName, n: number, nq: number, k: number, metaNq: number): string {
  return join(paths.gt, `${set}-n${n}-q${nq}-k${k}-held${metaNq}-v${GT_FORMAT}.json`);
}

export function readGroundTruth(file: string): GroundTruth {
  return JSON.parse(readFileSync(file, 'utf8')) as GroundTruth;
}

/** Compute (or read from the cache) the ground truth for the first n vectors and nq queries. */
export async function ensureGroundTruth(
  set: SetName,
  n: number,
  nq: number,
  k: number,
  selectivities: number[],
  threads: number,
): Promise<{ file: string; gt: GroundTruth; cached: boolean }> {
  const data = loadSet(set, n, nq, true);
  const file = gtPath(set, data.n, nq, k, data.meta.nq);
  const wanted = [null, ...[...selectivities].sort((a, b) => b - a).map(thresholdFor)];
  if (existsSync(file)) {
    const gt = readGroundTruth(file);
    const have = new Set(gt.cases.map((c) => c.threshold));
    if (wanted.every((t) => have.has(t))) return { file, gt, cached: true };
  }
  const { dim, metric } = data.meta;
  const t0 = Date.now();
  process.stderr.write(`[gt] ${set}: brute force ${nq} queries x ${data.n} vectors (${dim}-d, ${metric}) on ${threads} threads, once (cached)\n`);
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
  ensureDir(paths.gt);
  writeFileSync(`${file}.tmp`, JSON.stringify(gt));
  renameSync(`${file}.tmp`, file);
  process.stderr.write(`[gt] ${set}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  return { file, gt, cached: false };
}
