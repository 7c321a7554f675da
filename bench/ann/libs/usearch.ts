// usearch (2.25.3, the newest release whose engines field allows Node 20; prebuilt binary):
// Index.add with a batch and a thread count, Index.search(queries, k, threads). The JS API fixes
// expansion_search at construction, so each sweep setting opens the saved index through a new
// Index (memory-mapped with view(), then warmed up) built with that expansion_search.
import { statSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { LoadedSet } from '../datasets.js';
import { repoRoot } from '../paths.js';
import { packageVersion } from './hnswlib.js';
import type { Adapter, ChildTask } from './types.js';

const require = createRequire(import.meta.url);
type UsearchModule = typeof import('usearch');
type UIndex = InstanceType<UsearchModule['Index']>;

/** The native module's own report of the SIMD it dispatches to (not re-exported by the JS API). */
export function usearchIsa(): string | undefined {
  try {
    const pkgDir = join(repoRoot, 'node_modules', 'usearch');
    const gypBuild = require('node-gyp-build') as (dir: string) => { hardwareAccelerationAvailable?: () => string };
    return gypBuild(pkgDir).hardwareAccelerationAvailable?.();
  } catch {
    return undefined;
  }
}

export function createUsearch(task: ChildTask): Adapter {
  const usearch = require('usearch') as UsearchModule;
  let data: LoadedSet | null = null;
  let built: UIndex | null = null;
  let viewed: { ef: number; index: UIndex } | null = null;
  const indexPath = join(task.tmpDir, `usearch-${task.set}-${task.n}-${process.pid}.usearch`);

  const config = (ef: number) => ({
    dimensions: data!.meta.dim,
    metric: data!.meta.metric === 'cosine' ? usearch.MetricKind.Cos : usearch.MetricKind.L2sq,
    quantization: usearch.ScalarKind.F32,
    connectivity: task.hnsw.m,
    expansion_add: task.hnsw.efConstruction,
    expansion_search: ef,
    multi: false,
  });

  const open = (ef: number): UIndex => {
    if (viewed?.ef === ef) return viewed.index;
    const index = new usearch.Index(config(ef));
    index.view(indexPath);
    // Touch the mapped pages before timing.
    index.search(data!.queries.subarray(0, Math.min(200, data!.nq) * data!.meta.dim), task.k, 2);
    viewed = { ef, index };
    return index;
  };

  const ids = (res: { keys: BigUint64Array; counts: BigUint64Array; k: number }, nq: number): Int32Array[] => {
    const out: Int32Array[] = new Array(nq);
    for (let q = 0; q < nq; q++) {
      const c = Number(res.counts[q]);
      const row = new Int32Array(c);
      for (let i = 0; i < c; i++) row[i] = Number(res.keys[q * res.k + i]);
      out[q] = row;
    }
    return out;
  };

  return {
    version: packageVersion('usearch'),
    buildLabel: `M=${task.hnsw.m} efC=${task.hnsw.efConstruction}`,
    buildThreads: 2,
    knob: 'ef',
    notes: ['f32 storage; expansion_search set by reopening the saved index (view)'],
    isa: usearchIsa,
    async build(d) {
      data = d;
      built = new usearch.Index(config(64));
      const keys = new BigUint64Array(d.n);
      for (let i = 0; i < d.n; i++) keys[i] = BigInt(i);
      built.add(keys, d.base, 2);
    },
    async afterBuild() {
      built!.save(indexPath);
      built = null; // the sweep uses views of the saved file
    },
    async selfSize() {
      return { bytes: statSync(indexPath).size, kind: 'saved index file' };
    },
    async prepare(value) {
      open(value ?? 64);
    },
    async search(value, threads, limit = data!.nq) {
      const index = open(value ?? 64);
      const res = index.search(data!.queries.subarray(0, limit * data!.meta.dim), task.k, threads) as unknown as {
        keys: BigUint64Array;
        counts: BigUint64Array;
        k: number;
      };
      return ids(res, limit);
    },
    async close() {
      viewed = null;
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
