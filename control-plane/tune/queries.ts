/**
 * The queries a tuning run asks: the dataset's own vectors, found by searches for random points
 * (each query's own row is left out of its answers, so it is not a free hit), or a file's.
 */
import { readFileSync } from 'node:fs';
import type { SableClient } from '../../client/client.js';

export interface TuneQuery {
  vector: number[];
  /** The row it was taken from (left out of its own answers), or null for a query of a file. */
  ownId: number | string | null;
}

/** Up to `count` distinct stored vectors, near random points of the space (seeded). */
export async function sampleQueries(api: SableClient, dataset: string, dim: number, count: number, seed: number): Promise<TuneQuery[]> {
  const rand = mulberry32(seed);
  const found = new Map<string, TuneQuery>();
  // Nearest rows of random directions: a handful per probe, so the sample spreads over the data.
  for (let probe = 0; probe < count * 4 && found.size < count; probe++) {
    const point = Array.from({ length: dim }, () => gaussian(rand));
    const answer = await api.search(dataset, { query: point, top_k: 5, include_embeddings: true, include_metadata: false });
    for (const h of answer.results) {
      if (found.size >= count) break;
      if (h.embedding && !found.has(String(h.id))) found.set(String(h.id), { vector: h.embedding, ownId: h.id });
    }
  }
  return [...found.values()];
}

/** A JSON file of queries: an array of vectors, or of {vector} / {values} objects. */
export function readQueries(path: string, dim: number): TuneQuery[] {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${path}: expected a JSON array of vectors`);
  return raw.map((q, i) => {
    const v = Array.isArray(q) ? q : ((q as { vector?: unknown; values?: unknown }).vector ?? (q as { values?: unknown }).values);
    if (!Array.isArray(v) || v.length !== dim || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new Error(`${path}: query ${i} is not ${dim} finite numbers`);
    }
    return { vector: v as number[], ownId: null };
  });
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}
