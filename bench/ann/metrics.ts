// Exact distances (double-precision accumulation), ground-truth shapes and recall@k.
import type { Metric } from './datasets.js';
import { BUCKETS } from './config.js';
import { mix32 } from '../../testkit/rng.js';

/** The metadata column of the filtered cases: a uniform bucket in [0, BUCKETS) per id. */
export function bucketOf(id: number): number {
  return mix32(id ^ 0x5eed) % BUCKETS;
}

/**
 * The ids a load with deletes removes: a multiplicative hash, so the share holds at any size
 * and the sable child, the peers and the ground truth pick the same ids without sharing a list.
 */
export function isDeleted(id: number, share: number): boolean {
  return (Math.imul(id, 2654435761) >>> 0) / 2 ** 32 < share;
}

/** The filter `bucket < threshold` passes `threshold / BUCKETS` of the vectors. */
export function thresholdFor(selectivity: number): number {
  return Math.max(1, Math.round(selectivity * BUCKETS));
}

/** L2 norms of each row, as doubles. */
export function rowNorms(data: Float32Array, dim: number): Float64Array {
  const n = data.length / dim;
  const out = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    let s = 0;
    const o = r * dim;
    for (let i = 0; i < dim; i++) s += data[o + i]! * data[o + i]!;
    out[r] = Math.sqrt(s);
  }
  return out;
}

export function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    s0 += a[ao + i]! * b[bo + i]!;
    s1 += a[ao + i + 1]! * b[bo + i + 1]!;
    s2 += a[ao + i + 2]! * b[bo + i + 2]!;
    s3 += a[ao + i + 3]! * b[bo + i + 3]!;
  }
  for (; i < dim; i++) s0 += a[ao + i]! * b[bo + i]!;
  return s0 + s1 + s2 + s3;
}

export function l2sq(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    const d0 = a[ao + i]! - b[bo + i]!;
    const d1 = a[ao + i + 1]! - b[bo + i + 1]!;
    const d2 = a[ao + i + 2]! - b[bo + i + 2]!;
    const d3 = a[ao + i + 3]! - b[bo + i + 3]!;
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < dim; i++) {
    const d = a[ao + i]! - b[bo + i]!;
    s0 += d * d;
  }
  return s0 + s1 + s2 + s3;
}

/**
 * Exact distance between query q and base row r, in the metric's own terms (cosine: 1 - cos,
 * l2: squared distance), as the ground truth defines it.
 */
export class ExactDistance {
  private readonly baseNorms: Float64Array | null;
  private readonly queryNorms: Float64Array | null;

  constructor(
    private readonly base: Float32Array,
    private readonly queries: Float32Array,
    private readonly dim: number,
    private readonly metric: Metric,
  ) {
    this.baseNorms = metric === 'cosine' ? rowNorms(base, dim) : null;
    this.queryNorms = metric === 'cosine' ? rowNorms(queries, dim) : null;
  }

  distance(q: number, r: number): number {
    if (this.metric === 'l2') return l2sq(this.queries, q * this.dim, this.base, r * this.dim, this.dim);
    return 1 - dot(this.queries, q * this.dim, this.base, r * this.dim, this.dim) / (this.queryNorms![q]! * this.baseNorms![r]!);
  }
}

/** Exact top-k of every query for one filter (or none). */
export interface GtCase {
  /** 'all' or 'bucket<T'. */
  name: string;
  selectivity: number;
  /** Rows of the indexed set that pass the filter. */
  matching: number;
  threshold: number | null;
  /** Share of the ids deleted before the search (isDeleted); absent: none. */
  deletedShare?: number;
  /** ids[q] ascending by distance (fewer than k when fewer rows match). */
  ids: number[][];
  dists: number[][];
}

export interface GroundTruth {
  set: string;
  n: number;
  nq: number;
  k: number;
  metric: Metric;
  cases: GtCase[];
}

/**
 * Recall@k of `results` (ids per query, for the first results.length queries) against `gt`. A returned id that is not among the true
 * top-k still counts when its exact distance ties the k-th true distance (duplicates in the data),
 * and never counts when it fails the case's filter, was deleted or repeats.
 */
export function recallAtK(results: ArrayLike<number>[], gt: GtCase, k: number, exact: ExactDistance): number {
  let hit = 0;
  let want = 0;
  for (let q = 0; q < Math.min(gt.ids.length, results.length); q++) {
    const truth = gt.ids[q]!;
    const need = Math.min(k, truth.length);
    want += need;
    if (need === 0) continue;
    const truthSet = new Set(truth.slice(0, need));
    const kth = gt.dists[q]![need - 1]!;
    const tol = 1e-6 * Math.max(1, Math.abs(kth));
    const got = results[q]!;
    const seen = new Set<number>();
    let h = 0;
    for (let i = 0; i < Math.min(k, got.length); i++) {
      const id = got[i]!;
      if (id < 0 || seen.has(id)) continue;
      seen.add(id);
      if (gt.threshold !== null && bucketOf(id) >= gt.threshold) continue;
      if (gt.deletedShare && isDeleted(id, gt.deletedShare)) continue;
      if (truthSet.has(id) || exact.distance(q, id) <= kth + tol) h++;
    }
    hit += Math.min(h, need);
  }
  return want === 0 ? 1 : hit / want;
}
