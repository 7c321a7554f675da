/** Row `id`'s vector: values of a generator seeded by the id (a crash child and its parent agree on them). */
export function seededVector(id, dim) {
  const v = new Float32Array(dim);
  let s = (id * 2654435761 + 1) >>> 0;
  for (let t = 0; t < dim; t++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    v[t] = s / 4294967296 - 0.5;
  }
  return v;
}
