// Child of the large-upsert test: one upsert of many 384-d rows in a fresh process, then the
// growth of anonymous resident memory once the dataset is flushed (printed as JSON).
import { readFileSync } from 'node:fs';
import { Engine } from '../../dist/engine/index.js';

const rows = Number(process.argv[2]);
const dim = 384;
const anonMiB = () => Number(/^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
const vectors = new Float32Array(rows * dim);
let seed = 1;
for (let i = 0; i < vectors.length; i++) {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  vectors[i] = seed / 4294967296 - 0.5;
}
globalThis.gc();
const before = anonMiB();
const engine = await Engine.open({});
const ds = await engine.createDataset({ name: 'large', dim, metric: 'cosine' });
await ds.upsert(Float64Array.from({ length: rows }, (_, i) => i), vectors);
await ds.flush();
await new Promise((r) => setTimeout(r, 1000));
globalThis.gc();
process.stdout.write(JSON.stringify({ grownMiB: anonMiB() - before, count: ds.stats().vector_count }) + '\n');
await engine.close();
