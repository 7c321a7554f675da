import { Rng } from '../../dist/testkit/rng.js';

/** Row `id`'s vector: values of a generator seeded by the id (a crash child and its parent agree on them). */
export function seededVector(id, dim) {
  const rng = new Rng(id + 1);
  return Float32Array.from({ length: dim }, () => rng.next() - 0.5);
}
