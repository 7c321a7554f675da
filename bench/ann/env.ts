// What the run is measured on (commit, CPU, versions) and getting the peers ready: hnswlib-node's
// addon (npm 11 skips install scripts) and the FAISS harness (Debian's libfaiss-dev).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { ensureDir, paths } from './paths.js';

function log(msg: string): void {
  process.stderr.write(`[setup] ${msg}\n`);
}

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** The commit being measured (read-only git commands), "+dirty" when tracked files changed. */
export function gitCommit(): string {
  try {
    const head = execFileSync('git', ['-C', paths.root, 'rev-parse', '--short=12', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['-C', paths.root, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown (no commit yet)';
  }
}

export interface CpuInfo {
  model: string;
  cores: number;
  /** The x86 SIMD features that matter for distance kernels. */
  simd: string[];
}

export function cpuInfo(): CpuInfo {
  const list = cpus();
  let flags: string[] = [];
  try {
    const text = readFileSync('/proc/cpuinfo', 'utf8');
    const line = text.split('\n').find((l) => l.startsWith('flags') || l.startsWith('Features'));
    flags = line ? line.split(':')[1]!.trim().split(/\s+/) : [];
  } catch {
    // not Linux
  }
  const wanted = ['sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni', 'avx512_bf16', 'avx512_fp16', 'asimd', 'sve'];
  return { model: list[0]?.model ?? 'unknown', cores: list.length, simd: wanted.filter((f) => flags.includes(f)) };
}

/** hnswlib-node ships sources only; build its addon with node-gyp when it is missing. */
export function ensureHnswlib(): string | null {
  const addon = join(paths.root, 'node_modules', 'hnswlib-node', 'build', 'Release', 'addon.node');
  if (existsSync(addon)) return null;
  if (!existsSync(join(paths.root, 'node_modules', 'hnswlib-node', 'package.json'))) return 'hnswlib-node is not installed (npm install)';
  if (!has('g++') || !has('python3') || !has('make')) return 'hnswlib-node needs g++, make and python3 to build its addon';
  log('building hnswlib-node (npm rebuild hnswlib-node; npm 11 skipped its install script)');
  const r = spawnSync('npm', ['rebuild', 'hnswlib-node'], { cwd: paths.root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0 || !existsSync(addon)) return `npm rebuild hnswlib-node failed (exit ${r.status})`;
  return null;
}

const FAISS_HEADER = '/usr/include/faiss/IndexHNSW.h';

/**
 * Compile the FAISS harness into bench/build/ (again when its source is newer). Installs
 * libfaiss-dev (and OpenBLAS for its k-means) with apt-get when allowed, running as root, and missing.
 */
export function ensureFaiss(install: boolean): string | null {
  if (!existsSync(FAISS_HEADER)) {
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!install || !root || !has('apt-get')) {
      return 'libfaiss-dev is not installed (apt-get install -y libfaiss-dev libopenblas0-openmp)';
    }
    log('installing libfaiss-dev and libopenblas0-openmp with apt-get (once; --no-install to skip)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    const r = spawnSync('apt-get', ['install', '-y', 'libfaiss-dev', 'libopenblas0-openmp'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (r.status !== 0 || !existsSync(FAISS_HEADER)) return `apt-get install libfaiss-dev failed (exit ${r.status})`;
  }
  if (!has('g++')) return 'g++ is missing (needed to compile bench/faiss/faiss_bench.cpp)';
  const bin = paths.faissBinary;
  if (existsSync(bin) && statSync(bin).mtimeMs >= statSync(paths.faissSource).mtimeMs) return null;
  ensureDir(paths.build);
  log(`compiling ${paths.faissSource} -> ${bin}`);
  const r = spawnSync('g++', ['-O2', '-std=c++17', '-fopenmp', paths.faissSource, '-o', bin, '-lfaiss', '-lblas', '-llapack'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) return `compiling the FAISS harness failed (exit ${r.status})`;
  return null;
}

/** Which BLAS the harness will load (libblas.so.3 is an alternatives link on Debian). */
export function blasInUse(): string {
  try {
    const out = execFileSync('ldd', [paths.faissBinary], { encoding: 'utf8' });
    if (/libopenblas/.test(out)) return 'OpenBLAS';
    if (/libblis/.test(out)) return 'BLIS';
    if (/libmkl/.test(out)) return 'MKL';
    return 'reference BLAS';
  } catch {
    return 'unknown';
  }
}

/** Compile the exact brute-force tool (bench/ann/groundtruth.cpp); null when g++ is missing or fails. */
export function ensureGroundTruthTool(): string | null {
  const bin = paths.gtBinary;
  if (existsSync(bin) && statSync(bin).mtimeMs >= statSync(paths.gtSource).mtimeMs) return bin;
  if (!has('g++') || !existsSync(paths.gtSource)) return null;
  ensureDir(paths.build);
  log(`compiling ${paths.gtSource} -> ${bin}`);
  const r = spawnSync('g++', ['-O3', '-march=native', '-fopenmp-simd', '-pthread', '-std=c++17', paths.gtSource, '-o', bin], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return r.status === 0 ? bin : null;
}
