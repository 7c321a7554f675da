// A process whose worker threads are terminated while the native engine's async work is in
// flight (as piscina does when a pool closes): it must end by itself with code 0, never abort.
import { Worker } from 'node:worker_threads';

const engine = new URL('../../dist/engine/index.js', import.meta.url).href;
const code = `
  const { parentPort } = require('node:worker_threads');
  import(${JSON.stringify(engine)}).then(async ({ LocalEmbeddingModel }) => {
    const model = LocalEmbeddingModel.open({ threads: 1 });
    const text = 'the keeper climbs the stairs to light the lamp '.repeat(400);
    parentPort.postMessage('loaded');
    // Work that outlives the thread: its promises settle while the environment terminates.
    for (let i = 0; i < 8; i++) model.embed([text]).catch(() => {});
    parentPort.postMessage('started');
  });
`;
for (let round = 0; round < Number(process.argv[2] ?? 6); round++) {
  const worker = new Worker(code, { eval: true });
  await new Promise((resolve, reject) => {
    worker.on('message', (m) => m === 'started' && resolve());
    worker.on('error', reject);
  });
  await new Promise((r) => setTimeout(r, 5 * round));
  await worker.terminate();
}
// Let any work still running finish and try to settle its promises.
await new Promise((r) => setTimeout(r, 1500));
console.log('ok');
