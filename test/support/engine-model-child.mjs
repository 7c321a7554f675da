// Child of the engine model test's kill -9 case: applies seeded random operations to the dataset
// in `dir` until it is killed. Before each operation starts it writes `begin <op>` synchronously,
// so the parent knows every operation before the last one it reads was acknowledged.
import { writeSync } from 'node:fs';
import { Subject, randomOp, seeded } from './engine-model.mjs';

const [dir, seed, config] = process.argv.slice(2);
const subject = await new Subject(dir, JSON.parse(config)).open();
const rand = seeded(Number(seed));
writeSync(1, 'ready\n');
for (let n = 1; ; n++) {
  const op = randomOp(rand);
  writeSync(1, `begin ${JSON.stringify(op)}\n`);
  await subject.apply(op);
  // Background compactions and rebuilds fail loudly (the child exits) instead of piling up.
  if (n % 16 === 0) await subject.settle();
}
