// Model-based test of the embedded engine: fast-check generates sequences of upserts, deletes,
// re-inserts of deleted ids, schema changes, seals, rebuilds, compactions (some left running in
// the background while writes go on) and reopens; after every step the engine is compared with a
// plain in-memory model (ids, vectors, metadata, vector_count, exact search, approximate search).
// A second case kills a child process applying such operations with SIGKILL at random moments.
//
// `npm test` runs a short version; `npm run test:model` a long one (SABLE_MODEL_RUNS, _MAX_OPS,
// _KILLS; SABLE_MODEL_SEED replays a failing run with the seed fast-check printed).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { compare, DIM, IDS, INDEX_TYPES, Model, Subject } from '../support/engine-model.mjs';

const RUNS = Number(process.env.SABLE_MODEL_RUNS ?? 30);
const MAX_OPS = Number(process.env.SABLE_MODEL_MAX_OPS ?? 40);
const KILLS = Number(process.env.SABLE_MODEL_KILLS ?? 8);
const SEED = process.env.SABLE_MODEL_SEED === undefined ? undefined : Number(process.env.SABLE_MODEL_SEED);

const QUERIES = [
  [1, 0, 0, 0, 0, 0],
  [-2, 3, 1, 0, -1, 4],
  [4, 4, -4, 1, 2, -3],
  [0, -1, 2, -3, 1, 1],
].map((q) => Float32Array.from(q));

const vector = fc
  .array(fc.integer({ min: -4, max: 4 }), { minLength: DIM, maxLength: DIM })
  .map((v) => (v.every((x) => x === 0) ? [1, ...v.slice(1)] : v));
const metadata = fc.option(
  fc.record(
    { g: fc.integer({ min: 0, max: 3 }), s: fc.constantFrom('a', 'b', 'c'), note: fc.constantFrom('x', 'y', null, true) },
    { requiredKeys: [] },
  ),
  { nil: null, freq: 6 },
);
const id = fc.constantFrom(...(IDS as number[]));
const wait = fc.boolean();
const operation = fc.oneof(
  { weight: 10, arbitrary: fc.record({ op: fc.constant('upsert'), items: fc.array(fc.record({ id, v: vector, m: metadata }), { minLength: 1, maxLength: 8 }) }) },
  { weight: 7, arbitrary: fc.record({ op: fc.constant('delete'), ids: fc.array(id, { minLength: 1, maxLength: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('flush') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('compact'), wait }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rebuild'), wait }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('indexType'), type: fc.constantFrom(...(INDEX_TYPES as string[])), wait }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('schema'), types: fc.record({ g: fc.constantFrom('i64', 'f64', 'i32', 'f32', 'u32') }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('policy'), max_buffer_vectors: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('reopen') }) },
);
const config = fc.record({
  metric: fc.constantFrom('cosine', 'l2', 'ip'),
  indexType: fc.constantFrom(...(INDEX_TYPES as string[])),
  maxBuffer: fc.integer({ min: 1, max: 12 }),
});

describe('the engine against a model', () => {
  const dirs: string[] = [];
  const scratch = () => {
    const d = mkdtempSync(join(tmpdir(), 'sable-model-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('holds what the model holds after every step of random operation sequences', async () => {
    let steps = 0;
    await fc.assert(
      fc.asyncProperty(config, fc.array(operation, { minLength: 1, maxLength: MAX_OPS, size: "max" }), async (cfg, ops) => {
        const dir = scratch();
        const subject = await new Subject(dir, cfg).open();
        const model = new Model();
        try {
          for (let i = 0; i < ops.length; i++) {
            model.apply(ops[i]);
            await subject.apply(ops[i]);
            await compare(model, subject, QUERIES[i % QUERIES.length], `after step ${i}: ${JSON.stringify(ops[i])}`);
            steps++;
          }
          await subject.apply({ op: 'reopen' });
          await compare(model, subject, QUERIES[0], 'after the final reopen');
        } finally {
          await subject.close().catch(() => undefined);
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    console.log(`engine model: ${RUNS} runs, ${steps} steps checked`);
    expect(steps).toBeGreaterThan(0);
  });

  it('keeps every acknowledged operation through kill -9 at random moments', async () => {
    const dir = scratch();
    const cfg = { metric: 'cosine', indexType: 'sable', maxBuffer: 6 };
    await (await new Subject(dir, cfg).open()).close();
    let model = new Model();
    let applied = 0;
    const seed = SEED ?? Math.floor(Math.random() * 2 ** 31);
    for (let round = 0; round < KILLS; round++) {
      const lines = await runAndKill(dir, seed + round, cfg, 30 + ((seed + round * 97) % 300));
      const ops = lines.filter((l) => l.startsWith('begin ')).map((l) => JSON.parse(l.slice(6)));
      const last = ops.pop();
      for (const op of ops) model.apply(op);
      applied += ops.length;
      const subject = await new Subject(dir, cfg).open();
      try {
        const context = `kill round ${round} (seed ${seed + round}), the operation in flight: ${JSON.stringify(last)}`;
        const withLast = last ? model.clone().apply(last) : model;
        try {
          await compare(withLast, subject, QUERIES[round % QUERIES.length], context);
          model = withLast;
        } catch (e) {
          await compare(model, subject, QUERIES[round % QUERIES.length], `${context}\n(nor with it: ${(e as Error).message})`);
        }
      } finally {
        await subject.close();
      }
    }
    console.log(`engine model under kill -9: ${KILLS} kills, ${applied} acknowledged operations checked`);
    expect(applied).toBeGreaterThan(0);
  });
});

/** Runs the child on `dir` and kills it `ms` after it is ready; resolves with what it printed. */
function runAndKill(dir: string, seed: number, cfg: object, ms: number): Promise<string[]> {
  const child = spawn(process.execPath, [join(__dirname, '..', 'support', 'engine-model-child.mjs'), dir, String(seed), JSON.stringify(cfg)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let killed = false;
  child.stderr.on('data', (c: Buffer) => (err += String(c)));
  child.stdout.on('data', (c: Buffer) => {
    const first = out === '';
    out += String(c);
    if (first && out.startsWith('ready')) {
      setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, ms);
    }
  });
  return new Promise((resolve, reject) => {
    child.on('exit', () => {
      if (!killed) reject(new Error(`the child stopped before it was killed:\n${err}`));
      else resolve(out.split('\n').filter((l) => l !== ''));
    });
  });
}
