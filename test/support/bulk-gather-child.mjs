// Child of the bulk-gather crash test: a bulk load of a cosine sable dataset in batches of 100
// (partitions of 300 rows, gathered into one), deleting one row of each batch once it is in.
// Prints `ack <last id>` when a batch's upsert resolved and `del <id>` when a delete did; the
// parent kills it with SIGKILL.
import { Engine } from '../../dist/engine/index.js';
import { seededVector } from './seeded-vector.mjs';

const dir = process.argv[2];
if (!dir) throw new Error('usage: bulk-gather-child.mjs DIR');
const dim = 16;
const engine = await Engine.open({ path: dir });
const ds = await engine.createDataset({ name: 'gather', dim, metric: 'cosine', promotion: { max_buffer_vectors: 300, max_buffer_age_ms: 3_600_000 } });
const bulk = ds.beginBulkLoad();
bulk.expectRows(1_000_000);
for (let first = 0; ; first += 100) {
  const vectors = new Float32Array(100 * dim);
  for (let i = 0; i < 100; i++) vectors.set(seededVector(first + i, dim), i * dim);
  await ds.upsert(Float64Array.from({ length: 100 }, (_, i) => first + i), vectors, undefined, { bulk: true });
  process.stdout.write(`ack ${first + 99}\n`);
  await ds.delete([first + 5]);
  process.stdout.write(`del ${first + 5}\n`);
}
