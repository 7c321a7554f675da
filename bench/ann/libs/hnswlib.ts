// hnswlib-node 3.0.0: HierarchicalNSW, built point by point (its API takes number[] points and has
// no batch insert or batch search), searched with searchKnn per query. Two-thread QPS: the index is
// saved to a file and loaded by two worker_threads, each answering half of the queries. A task
// with deletes (bench:ann:matrix) markDeletes the same ids after the build, as a user would.
import { readFileSync, statSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { LoadedSet } from '../datasets.js';
import { paths, repoRoot } from '../paths.js';
import { isDeleted } from '../metrics.js';
import { deletedShare, type Adapter, type ChildTask, type LoadFigures } from './types.js';

const require = createRequire(import.meta.url);

export interface HnswlibWorkerInit {
  indexPath: string;
  space: 'cosine' | 'l2';
  dim: number;
  queries: Float32Array;
  k: number;
}

type HnswlibModule = typeof import('hnswlib-node');

export function loadHnswlib(): HnswlibModule {
  return require('hnswlib-node') as HnswlibModule;
}

/** The installed version of a package (read from node_modules: some packages do not export package.json). */
export function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function createHnswlib(task: ChildTask): Adapter {
  const lib = loadHnswlib();
  let index: InstanceType<HnswlibModule['HierarchicalNSW']> | null = null;
  let data: LoadedSet | null = null;
  let queryArrays: number[][] = [];
  let workers: Worker[] = [];
  const indexPath = join(task.tmpDir, `hnswlib-${task.set}-${task.n}-${process.pid}.bin`);
  const share = deletedShare(task.load);
  let loaded: LoadFigures | undefined;

  const startWorkers = async (): Promise<void> => {
    const d = data!;
    const dim = d.meta.dim;
    const half = Math.ceil(d.nq / 2);
    workers = [0, 1].map((w) => {
      const init: HnswlibWorkerInit = {
        indexPath,
        space: d.meta.metric,
        dim,
        queries: d.queries.slice(w * half * dim, Math.min(d.nq, (w + 1) * half) * dim),
        k: task.k,
      };
      return new Worker(paths.hnswlibWorker, { workerData: init });
    });
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const onError = (e: Error) => reject(e);
            w.once('error', onError);
            w.once('message', () => {
              w.off('error', onError);
              resolve();
            });
          }),
      ),
    );
  };

  return {
    version: packageVersion('hnswlib-node'),
    buildLabel: `M=${task.hnsw.m} efC=${task.hnsw.efConstruction}${share > 0 ? `, ${share * 100}% markDelete'd` : ''}`,
    buildThreads: 1,
    knob: 'ef',
    notes: ['single-thread build (addPoint has no batch or threads)'],
    loadFigures: () => loaded,
    async build(d) {
      data = d;
      const dim = d.meta.dim;
      const t0 = performance.now();
      index = new lib.HierarchicalNSW(d.meta.metric === 'cosine' ? 'cosine' : 'l2', dim);
      index.initIndex({ maxElements: d.n, m: task.hnsw.m, efConstruction: task.hnsw.efConstruction, randomSeed: 100 });
      const point = new Array<number>(dim);
      for (let r = 0; r < d.n; r++) {
        const o = r * dim;
        for (let i = 0; i < dim; i++) point[i] = d.base[o + i]!;
        index.addPoint(point, r);
      }
      if (!task.load) return;
      let deleted = 0;
      for (let r = 0; r < d.n; r++) {
        if (!isDeleted(r, share)) continue;
        index.markDelete(r);
        deleted++;
      }
      loaded = { pattern: task.load, deleted, loadSeconds: (performance.now() - t0) / 1000, settleSeconds: null, partitions: null };
    },
    async afterBuild() {
      const d = data!;
      const dim = d.meta.dim;
      // The API takes number[]: convert the queries once, outside the timed loops.
      queryArrays = Array.from({ length: d.nq }, (_, q) => Array.from(d.queries.subarray(q * dim, (q + 1) * dim)));
      index!.writeIndexSync(indexPath);
      if (!task.oneThread) await startWorkers();
    },
    async selfSize() {
      return { bytes: statSync(indexPath).size, kind: 'saved index file' };
    },
    async search(value, threads, limit = queryArrays.length) {
      const ef = value ?? 10;
      if (threads === 1) {
        index!.setEf(ef);
        const out: number[][] = new Array(limit);
        for (let q = 0; q < limit; q++) out[q] = index!.searchKnn(queryArrays[q]!, task.k).neighbors;
        return out;
      }
      // Each worker answers the first limit/2 of its half (all of it without a limit).
      const each = Math.ceil(limit / 2);
      const parts = await Promise.all(
        workers.map(
          (w) =>
            new Promise<number[][]>((resolve, reject) => {
              const onError = (e: Error) => reject(e);
              w.once('error', onError);
              w.once('message', (m: { ids: number[][] }) => {
                w.off('error', onError);
                resolve(m.ids);
              });
              w.postMessage({ ef, limit: each });
            }),
        ),
      );
      return parts.flat();
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
      if (!task.keepTmp) {
        try {
          unlinkSync(indexPath);
        } catch {
          // already gone
        }
      }
    },
  };
}
