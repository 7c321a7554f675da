// Worker thread of the brute-force ground truth: exact top-k of a range of queries over every
// indexed vector, for the unfiltered case and every filter at once (one distance per pair).
import { parentPort, workerData } from 'node:worker_threads';
import { bucketOf, dot, l2sq } from './metrics.js';

export interface GtWorkerInput {
  base: Float32Array; // shared
  queries: Float32Array; // shared
  baseNorms: Float64Array | null; // shared, cosine only
  dim: number;
  n: number;
  metric: 'cosine' | 'l2';
  k: number;
  /** null = no filter; T = bucket < T. Listed unfiltered first, then by decreasing T. */
  thresholds: (number | null)[];
  qStart: number;
  qEnd: number;
}

export interface GtWorkerOutput {
  qStart: number;
  /** [case][query - qStart] */
  ids: number[][][];
  dists: number[][][];
}

class TopK {
  readonly ids: Int32Array;
  readonly d: Float64Array;
  size = 0;
  constructor(private readonly k: number) {
    this.ids = new Int32Array(k);
    this.d = new Float64Array(k).fill(Infinity);
  }
  get worst(): number {
    return this.size < this.k ? Infinity : this.d[this.k - 1]!;
  }
  push(id: number, dist: number): void {
    let i = Math.min(this.size, this.k - 1);
    while (i > 0 && this.d[i - 1]! > dist) {
      this.d[i] = this.d[i - 1]!;
      this.ids[i] = this.ids[i - 1]!;
      i--;
    }
    this.d[i] = dist;
    this.ids[i] = id;
    if (this.size < this.k) this.size++;
  }
}

function run(input: GtWorkerInput): GtWorkerOutput {
  const { base, queries, baseNorms, dim, n, metric, k, thresholds, qStart, qEnd } = input;
  const buckets = new Uint16Array(n);
  for (let r = 0; r < n; r++) buckets[r] = bucketOf(r);
  const out: GtWorkerOutput = { qStart, ids: thresholds.map(() => []), dists: thresholds.map(() => []) };
  for (let q = qStart; q < qEnd; q++) {
    const qo = q * dim;
    let qn = 1;
    if (metric === 'cosine') qn = Math.sqrt(dot(queries, qo, queries, qo, dim));
    const tops = thresholds.map(() => new TopK(k));
    for (let r = 0; r < n; r++) {
      const dist = metric === 'l2' ? l2sq(queries, qo, base, r * dim, dim) : 1 - dot(queries, qo, base, r * dim, dim) / (qn * baseNorms![r]!);
      const b = buckets[r]!;
      for (let c = 0; c < thresholds.length; c++) {
        const t = thresholds[c]!;
        if (t !== null && b >= t) break; // thresholds decrease after the unfiltered case
        const top = tops[c]!;
        if (dist < top.worst) top.push(r, dist);
      }
    }
    for (let c = 0; c < thresholds.length; c++) {
      const top = tops[c]!;
      out.ids[c]!.push(Array.from(top.ids.subarray(0, top.size)));
      out.dists[c]!.push(Array.from(top.d.subarray(0, top.size)));
    }
    if (q % 50 === 0) parentPort!.postMessage({ progress: q - qStart });
  }
  return out;
}

if (parentPort) parentPort.postMessage({ done: run(workerData as GtWorkerInput) });
