// Seeded data for tests: gaussian clusters (the benchmark's generator family, small sizes) and an
// exact oracle. The same seed gives the same vectors on every machine.
import { Rng } from '../../dist/testkit/rng.js';

export function clustered(n: number, dim: number, seed: number, clusters = 16): Float32Array {
  const rng = new Rng(seed);
  const centres = new Float32Array(clusters * dim);
  for (let i = 0; i < centres.length; i++) centres[i] = rng.gauss();
  const out = new Float32Array(n * dim);
  for (let r = 0; r < n; r++) {
    const c = rng.int(clusters);
    for (let d = 0; d < dim; d++) out[r * dim + d] = centres[c * dim + d] + 0.35 * rng.gauss();
  }
  return out;
}

export function row(data: Float32Array, dim: number, r: number): Float32Array {
  return data.subarray(r * dim, (r + 1) * dim);
}

export type Metric = 'cosine' | 'l2' | 'ip';

export function score(metric: Metric, a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0, na = 0, nb = 0, l2 = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
    l2 += (a[i] - b[i]) ** 2;
  }
  if (metric === 'l2') return l2;
  if (metric === 'ip') return -dot;
  return na === 0 || nb === 0 ? 1 : 1 - dot / Math.sqrt(na * nb);
}

/** Exact top-k ids among rows for which `allow(row)` holds. */
export function exactTopK(metric: Metric, data: Float32Array, dim: number, q: Float32Array, k: number,
  allow: (r: number) => boolean = () => true): number[] {
  const n = data.length / dim;
  const scored: [number, number][] = [];
  for (let r = 0; r < n; r++) if (allow(r)) scored.push([score(metric, q, row(data, dim, r)), r]);
  scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return scored.slice(0, k).map((s) => s[1]);
}

export function recall(found: number[], truth: number[]): number {
  const t = new Set(truth);
  return truth.length === 0 ? 1 : found.filter((id) => t.has(id)).length / truth.length;
}
