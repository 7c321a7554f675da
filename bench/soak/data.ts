// The soak's vectors: the ANN bench's seeded synthetic set (bench/ann/datasets.ts), read from its
// cache in bench/.cache/data/synthetic when that holds enough rows, else generated in memory (the
// generator is prefix-stable, so both give the same rows). A dimension under 768 keeps the first
// coordinates of each vector: a projection of the same clustered cloud.
import { loadSet, readMeta, SYNTHETIC, SyntheticGenerator } from '../ann/datasets.js';

export interface SoakData {
  base: Float32Array;
  queries: Float32Array;
  n: number;
  nq: number;
  dim: number;
  source: string;
}

function project(full: Float32Array, rows: number, dim: number): Float32Array {
  if (dim === SYNTHETIC.dim) return full;
  const out = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) out.set(full.subarray(r * SYNTHETIC.dim, r * SYNTHETIC.dim + dim), r * dim);
  return out;
}

export function soakData(n: number, nq: number, dim: number): SoakData {
  if (dim > SYNTHETIC.dim) throw new Error(`dim ${dim}: the generator makes ${SYNTHETIC.dim}-d vectors`);
  const gen = new SyntheticGenerator();
  const meta = readMeta('synthetic');
  let base: Float32Array | null = null;
  let queries: Float32Array | null = null;
  let from = 'generated in memory';
  if (meta && meta.dim === SYNTHETIC.dim && meta.count >= n && meta.nq >= nq) {
    const set = loadSet('synthetic', n, nq);
    // A cache written by another version of the generator would silently change the data.
    const probe = new Float32Array(SYNTHETIC.dim);
    gen.fill(probe, 0, n - 1, 1);
    if (probe.every((v, i) => v === set.base[(n - 1) * SYNTHETIC.dim + i])) {
      base = set.base;
      queries = set.queries;
      from = 'read from bench/.cache/data/synthetic';
    }
  }
  if (!base || !queries) {
    base = new Float32Array(n * SYNTHETIC.dim);
    for (let first = 0; first < n; first += 10_000) gen.fill(base.subarray(first * SYNTHETIC.dim), 0, first, Math.min(10_000, n - first));
    queries = new Float32Array(nq * SYNTHETIC.dim);
    gen.fill(queries, 1, 0, nq);
  }
  const { latent, clusters, seed } = SYNTHETIC;
  return {
    base: project(base, n, dim),
    queries: project(queries, nq, dim),
    n,
    nq,
    dim,
    source:
      `the ANN bench's synthetic generator (seed ${seed}: ${clusters} Gaussian clusters in ${latent}-d mapped to ${SYNTHETIC.dim}-d` +
      `${dim < SYNTHETIC.dim ? `, first ${dim} coordinates kept` : ''}), ${from}`,
  };
}
