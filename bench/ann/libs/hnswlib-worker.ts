// One of the two worker threads of hnswlib-node's two-thread measurement: loads the saved index,
// says ready, then answers (the first `limit` of) its half of the queries for every { ef, limit }.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type { HnswlibWorkerInit } from './hnswlib.js';

const require = createRequire(import.meta.url);
const lib = require('hnswlib-node') as typeof import('hnswlib-node');
const init = workerData as HnswlibWorkerInit;

const index = new lib.HierarchicalNSW(init.space, init.dim);
index.readIndexSync(init.indexPath);
const nq = init.queries.length / init.dim;
const queries = Array.from({ length: nq }, (_, q) => Array.from(init.queries.subarray(q * init.dim, (q + 1) * init.dim)));

parentPort!.on('message', (m: { ef: number; limit: number }) => {
  index.setEf(m.ef);
  const count = Math.min(nq, m.limit);
  const ids: number[][] = new Array(count);
  for (let q = 0; q < count; q++) ids[q] = index.searchKnn(queries[q]!, init.k).neighbors;
  parentPort!.postMessage({ ids });
});
parentPort!.postMessage({ ready: true });
