// Where the benchmark keeps its files. Everything is found from the repository root, the first
// folder above this compiled file whose package.json is named "sable-retrieval", so the bench runs the same
// from dist/bench/ann/ and from a scratch build elsewhere in the tree.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'sable-retrieval') return dir;
      } catch {
        // not ours; keep climbing
      }
    }
    const up = dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

export const repoRoot = findRepoRoot();
/** The folder holding this compiled file (dist/bench/ann or a scratch build). */
export const compiledDir = dirname(fileURLToPath(import.meta.url));

export const paths = {
  root: repoRoot,
  cache: join(repoRoot, 'bench', '.cache'),
  packages: join(repoRoot, 'bench', '.cache', 'packages'),
  data: join(repoRoot, 'bench', '.cache', 'data'),
  gt: join(repoRoot, 'bench', '.cache', 'gt'),
  tmp: join(repoRoot, 'bench', '.cache', 'tmp'),
  build: join(repoRoot, 'bench', 'build'),
  faissSource: join(repoRoot, 'bench', 'faiss', 'faiss_bench.cpp'),
  faissBinary: join(repoRoot, 'bench', 'build', 'faiss_bench'),
  gtSource: join(repoRoot, 'bench', 'ann', 'groundtruth.cpp'),
  gtBinary: join(repoRoot, 'bench', 'build', 'groundtruth'),
  results: join(repoRoot, 'bench', 'results'),
  child: join(compiledDir, 'child.js'),
  gtWorker: join(compiledDir, 'gt-worker.js'),
  hnswlibWorker: join(compiledDir, 'libs', 'hnswlib-worker.js'),
  /** The compiled engine (loaded at run time, see libs/sable.ts). */
  engineModule: join(repoRoot, 'dist', 'engine', 'index.js'),
};

export function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
