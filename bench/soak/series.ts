// Time series of a soak: per bucket and operation the latencies of answered requests and the
// errors; percentiles by nearest rank from every request's own timing (bench/http/stats.ts);
// a least-squares line through the RSS samples.
import { percentiles } from '../http/stats.js';
import { OPS, type OpKind } from './config.js';

/** A growable list of latencies (ms). */
class Samples {
  private a = new Float64Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }

  view(): Float64Array {
    return this.a.subarray(0, this.length);
  }
}

export interface OpStats {
  /** Requests answered with 2xx and a body that passed its check. */
  ok: number;
  errors: number;
  /** Error kind -> count: "503 dataset_not_ready (POST /search)", "ECONNRESET (POST /insert)". */
  codes: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
}

export class Recorder {
  private readonly lat = new Map<string, Samples>();
  private readonly errs = new Map<string, { errors: number; codes: Record<string, number> }>();
  readonly buckets: number;

  constructor(
    readonly bucketMs: number,
    durationMs: number,
  ) {
    this.buckets = Math.ceil(durationMs / bucketMs);
  }

  bucketOf(elapsedMs: number): number {
    return Math.min(this.buckets - 1, Math.max(0, Math.floor(elapsedMs / this.bucketMs)));
  }

  ok(bucket: number, op: OpKind, ms: number): void {
    const k = `${bucket}:${op}`;
    let s = this.lat.get(k);
    if (!s) this.lat.set(k, (s = new Samples()));
    s.push(ms);
  }

  error(bucket: number, op: OpKind, code: string): void {
    const k = `${bucket}:${op}`;
    let e = this.errs.get(k);
    if (!e) this.errs.set(k, (e = { errors: 0, codes: {} }));
    e.errors++;
    e.codes[code] = (e.codes[code] ?? 0) + 1;
  }

  private stats(latencies: Float64Array[], errs: { errors: number; codes: Record<string, number> }[]): OpStats {
    const n = latencies.reduce((s, a) => s + a.length, 0);
    const all = new Float64Array(n);
    let at = 0;
    for (const a of latencies) {
      all.set(a, at);
      at += a.length;
    }
    const [p50, p99, max] = percentiles(all, [0.5, 0.99, 1]);
    const codes: Record<string, number> = {};
    for (const e of errs) for (const [c, v] of Object.entries(e.codes)) codes[c] = (codes[c] ?? 0) + v;
    return { ok: n, errors: errs.reduce((s, e) => s + e.errors, 0), codes, p50: p50!, p99: p99!, max: max! };
  }

  /** One bucket's figures per operation. */
  bucket(b: number): Record<OpKind, OpStats> {
    const out = {} as Record<OpKind, OpStats>;
    for (const op of OPS) {
      const l = this.lat.get(`${b}:${op}`);
      const e = this.errs.get(`${b}:${op}`);
      out[op] = this.stats(l ? [l.view()] : [], e ? [e] : []);
    }
    return out;
  }

  /** The whole run's figures per operation (from every request, not from the buckets' percentiles). */
  total(): Record<OpKind, OpStats> {
    const out = {} as Record<OpKind, OpStats>;
    for (const op of OPS) {
      const ls: Float64Array[] = [];
      const es: { errors: number; codes: Record<string, number> }[] = [];
      for (let b = 0; b < this.buckets; b++) {
        const l = this.lat.get(`${b}:${op}`);
        if (l) ls.push(l.view());
        const e = this.errs.get(`${b}:${op}`);
        if (e) es.push(e);
      }
      out[op] = this.stats(ls, es);
    }
    return out;
  }
}

export interface LineFit {
  /** Per second of x. */
  slope: number;
  intercept: number;
  r2: number;
  points: number;
}

/** Ordinary least squares y = intercept + slope * x. */
export function fitLine(xs: number[], ys: number[]): LineFit {
  const n = xs.length;
  if (n < 2) return { slope: NaN, intercept: NaN, r2: NaN, points: n };
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : NaN;
  return { slope, intercept: my - slope * mx, r2: sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0, points: n };
}
