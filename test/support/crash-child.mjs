// Child process of the crash test: upserts batches forever and prints the last id of each batch
// once its upsert has resolved (acknowledged). The parent kills it with SIGKILL.
import { Engine } from '../../dist/engine/index.js';

const dir = process.argv[2];
const engine = await Engine.open({ path: dir });
const ds = engine.getDataset('crash') ?? (await engine.createDataset({
  name: 'crash', dim: 8, metric: 'l2', promotion: { max_buffer_vectors: 700, max_buffer_age_ms: 3_600_000 },
}));
let next = 0;
for (;;) {
  const ids = Array.from({ length: 50 }, (_, i) => next + i);
  const vectors = new Float32Array(50 * 8);
  ids.forEach((id, i) => vectors.fill(id, i * 8, i * 8 + 8));
  await ds.upsert(ids, vectors, ids.map((id) => ({ id })));
  next += 50;
  process.stdout.write(`ack ${next - 1}\n`);
}
