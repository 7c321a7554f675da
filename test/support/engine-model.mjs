// Model-based checking of the embedded engine: operations as plain JSON, a plain in-memory model
// of what a dataset must hold after them, the same operations applied to a real `Engine`, and a
// comparison of the two. Shared by test/engine/engine-model.test.ts (fast-check generates the sequences)
// and its kill -9 child (test/support/engine-model-child.mjs, a seeded generator), so it is plain
// JavaScript: the child runs under node without a TypeScript loader.
//
// Operations:
//   { op: 'upsert', items: [{ id, v: number[], m: object | null }] }
//   { op: 'delete', ids: number[] }
//   { op: 'flush' }                         seal the growing partition, wait for every build
//   { op: 'compact', wait: boolean }        merge partitions; without wait it runs in the background
//   { op: 'rebuild', wait: boolean }        rebuild every sealed partition's index
//   { op: 'indexType', type, wait }         set the index type and rebuild
//   { op: 'schema', types: { g: 'i64' } }   declare column types (columns rebuilt in place)
//   { op: 'policy', max_buffer_vectors }    promotion bound (upserts past it seal in the background)
//   { op: 'reopen' }                        close the engine and open the directory again
import { Rng } from '../../dist/testkit/rng.js';
import { Engine } from '../../dist/engine/index.js';

export const DIM = 6;
/** Ids drawn by the generators: small ones collide often; two large ones check 53-bit ids. */
export const IDS = [...Array.from({ length: 40 }, (_, i) => i), 2 ** 40 + 7, Number.MAX_SAFE_INTEGER];
export const INDEX_TYPES = ['sable', 'hnsw', 'ivf', 'flat'];
const NUMERIC_TYPES = ['i64', 'f64', 'i32', 'f32', 'u32'];
const NAME = 'model';

/** What the dataset must hold: id -> { v: Float32Array, m: metadata object }. */
export class Model {
  constructor(rows = new Map()) {
    this.rows = rows;
  }

  clone() {
    return new Model(new Map(this.rows));
  }

  apply(op) {
    if (op.op === 'upsert') {
      for (const item of op.items) this.rows.set(item.id, { v: Float32Array.from(item.v), m: item.m ?? {} });
    } else if (op.op === 'delete') {
      for (const id of op.ids) this.rows.delete(id);
    }
    return this;
  }
}

/** A real engine on `dir` with the dataset of a run, and the background work it started. */
export class Subject {
  constructor(dir, config) {
    this.dir = dir;
    this.config = config;
    this.engine = null;
    this.ds = null;
    this.background = [];
  }

  async open() {
    this.engine = await Engine.open({ path: this.dir });
    this.ds =
      this.engine.getDataset(NAME) ??
      (await this.engine.createDataset({
        name: NAME,
        dim: DIM,
        metric: this.config.metric,
        indexType: this.config.indexType,
        promotion: { max_buffer_vectors: this.config.maxBuffer, max_buffer_age_ms: 3_600_000 },
      }));
    return this;
  }

  /** Waits for background work it started; the first failure is thrown. */
  async settle() {
    const work = this.background;
    this.background = [];
    const failure = (await Promise.all(work)).find((e) => e !== null);
    if (failure) throw failure;
  }

  async close() {
    await this.settle();
    await this.engine.close();
  }

  async apply(op) {
    const ds = this.ds;
    switch (op.op) {
      case 'upsert': {
        const vectors = new Float32Array(op.items.length * DIM);
        op.items.forEach((item, i) => vectors.set(item.v, i * DIM));
        await ds.upsert(op.items.map((i) => i.id), vectors, op.items.map((i) => i.m));
        return;
      }
      case 'delete':
        await ds.delete(op.ids);
        return;
      case 'flush':
        await ds.flush();
        return;
      case 'compact':
        return this.run(op.wait, ds.compact());
      case 'rebuild':
        return this.run(op.wait, ds.rebuild());
      case 'indexType':
        return this.run(op.wait, ds.setIndexType(op.type));
      case 'schema':
        await ds.setColumnTypes(op.types);
        return;
      case 'policy':
        await ds.setPromotionPolicy({ max_buffer_vectors: op.max_buffer_vectors });
        return;
      case 'reopen':
        await this.close();
        await this.open();
        return;
      default:
        throw new Error(`unknown operation ${op.op}`);
    }
  }

  async run(wait, promise) {
    if (wait) await promise;
    else this.background.push(promise.then(() => null, (e) => e));
  }
}

function distance(metric, a, b) {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  let l2 = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
    l2 += (a[i] - b[i]) ** 2;
  }
  if (metric === 'l2') return l2;
  if (metric === 'ip') return -dot;
  return 1 - dot / Math.sqrt(aa * bb);
}

function fail(message, context) {
  throw new Error(`${message}\n${context}`);
}

function sameMetadata(a, b) {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && Object.is(a[k], b[k]));
}

/** Model rows passing the filters the checks use: `s` equality and `g >= 2`. */
const FILTERS = [
  { opts: { filters: { s: 'a' } }, holds: (m) => m.s === 'a' },
  { opts: { advancedFilters: [{ field: 'g', op: 'gte', value: 2 }] }, holds: (m) => typeof m.g === 'number' && m.g >= 2 },
  { opts: { filters: { s: 'b' }, advancedFilters: [{ field: 'g', op: 'lt', value: 2 }] }, holds: (m) => m.s === 'b' && typeof m.g === 'number' && m.g < 2 },
];

/**
 * Compares the engine with the model: every id's vector and metadata in LMDB, the vector count,
 * exact search (all rows, filtered and not) equal to the model's rows with the right scores, and
 * approximate search returning only rows the model holds, never fewer than it can.
 */
export async function compare(model, subject, query, context = '') {
  const ds = subject.ds;
  const metric = subject.config.metric;
  for (const id of IDS) {
    const want = model.rows.get(id);
    const meta = ds.getMetadata(id);
    const vector = ds.getVector(id);
    if (!want) {
      if (meta !== undefined || vector !== undefined) fail(`id ${id} is stored but the model deleted it`, context);
      continue;
    }
    if (!vector || vector.length !== DIM || vector.some((x, i) => x !== want.v[i])) fail(`id ${id}: stored vector differs`, context);
    if (!meta || !sameMetadata(meta, want.m)) fail(`id ${id}: metadata ${JSON.stringify(meta)} != ${JSON.stringify(want.m)}`, context);
  }
  const stats = ds.stats();
  if (stats.vector_count !== model.rows.size) fail(`vector_count ${stats.vector_count} != ${model.rows.size}`, context);

  for (const filter of [{ opts: {}, holds: () => true }, ...FILTERS]) {
    const expected = [...model.rows].filter(([, r]) => filter.holds(r.m));
    const label = JSON.stringify(filter.opts);
    const exact = await ds.search(query, { ...filter.opts, topK: IDS.length + 5, exact: true });
    const got = new Map(exact.map((h) => [h.id, h]));
    if (got.size !== exact.length) fail(`exact search ${label} returned an id twice: ${exact.map((h) => h.id)}`, context);
    if (got.size !== expected.length || expected.some(([id]) => !got.has(id))) {
      fail(`exact search ${label} returned ${[...got.keys()].sort((a, b) => a - b)}, model holds ${expected.map(([id]) => id).sort((a, b) => a - b)}`, context);
    }
    for (const [id, row] of expected) {
      const hit = got.get(id);
      const score = distance(metric, query, row.v);
      if (!(Math.abs(hit.score - score) <= 5e-3 * (1 + Math.abs(score)))) fail(`exact search ${label}: id ${id} scored ${hit.score}, expected ${score}`, context);
      if (!sameMetadata(hit.metadata, row.m)) fail(`exact search ${label}: id ${id} metadata differs`, context);
    }
    for (let i = 1; i < exact.length; i++) {
      if (exact[i].score < exact[i - 1].score) fail(`exact search ${label} is not in ascending order`, context);
    }
    const approx = await ds.search(query, { ...filter.opts, topK: 10 });
    const ids = approx.map((h) => h.id);
    if (new Set(ids).size !== ids.length) fail(`search ${label} returned an id twice: ${ids}`, context);
    for (const h of approx) {
      const row = model.rows.get(h.id);
      if (!row) fail(`search ${label} returned id ${h.id}, which the model does not hold`, context);
      if (!filter.holds(row.m)) fail(`search ${label} returned id ${h.id}, which fails the filter`, context);
      if (!sameMetadata(h.metadata, row.m)) fail(`search ${label}: id ${h.id} metadata differs`, context);
    }
    if (approx.length !== Math.min(10, expected.length)) fail(`search ${label} returned ${approx.length} hits; ${expected.length} rows match`, context);
  }
}

// ------------------------------------------------------------------ a seeded generator (the child)

/** A seeded generator (the benchmarks' own), so a child's run can be replayed from its seed. */
export function seeded(seed) {
  const rng = new Rng(seed);
  return () => rng.next();
}

const pick = (rand, list) => list[Math.floor(rand() * list.length)];

export function randomVector(rand) {
  // Small integers: exact in half precision, never all zero (cosine needs a norm).
  const v = Array.from({ length: DIM }, () => Math.floor(rand() * 9) - 4);
  if (v.every((x) => x === 0)) v[0] = 1;
  return v;
}

export function randomMetadata(rand) {
  const r = rand();
  if (r < 0.15) return null;
  const m = {};
  if (rand() < 0.8) m.g = Math.floor(rand() * 4);
  if (rand() < 0.8) m.s = pick(rand, ['a', 'b', 'c']);
  if (rand() < 0.2) m.note = pick(rand, ['x', 'y', null, true]);
  return m;
}

/** One operation, weighted toward writes, from a seeded generator. */
export function randomOp(rand) {
  const r = rand();
  if (r < 0.4) {
    const n = 1 + Math.floor(rand() * 8);
    return { op: 'upsert', items: Array.from({ length: n }, () => ({ id: pick(rand, IDS), v: randomVector(rand), m: randomMetadata(rand) })) };
  }
  if (r < 0.7) return { op: 'delete', ids: Array.from({ length: 1 + Math.floor(rand() * 6) }, () => pick(rand, IDS)) };
  if (r < 0.76) return { op: 'flush' };
  if (r < 0.82) return { op: 'compact', wait: rand() < 0.5 };
  if (r < 0.87) return { op: 'rebuild', wait: rand() < 0.5 };
  if (r < 0.89) return { op: 'indexType', type: pick(rand, INDEX_TYPES), wait: rand() < 0.5 };
  if (r < 0.94) return { op: 'schema', types: { g: pick(rand, NUMERIC_TYPES) } };
  return { op: 'policy', max_buffer_vectors: 1 + Math.floor(rand() * 12) };
}
