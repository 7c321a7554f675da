// Request bodies of the search route in its two encodings, shared by the load generator and the
// per-request cost measurements.
import { Packr } from 'msgpackr';
import type { Format } from './config.js';

export const packr = new Packr({ useRecords: false });
export const MSGPACK = 'application/msgpack';

/**
 * The body of one search. JSON: the query as a JSON array of numbers, as a JS client writes a
 * Float32Array (`Array.from`, so each float32 prints as its shortest double form, ~17 digits).
 * msgpack: the float32 binary (little-endian bytes) the fast path expects.
 */
export function searchBody(format: Format, q: Float32Array, topK: number): Buffer {
  if (format === 'json') return Buffer.from(JSON.stringify({ query: Array.from(q), top_k: topK }));
  const bytes = Buffer.from(q.buffer.slice(q.byteOffset, q.byteOffset + q.byteLength));
  return packr.pack({ query: bytes, top_k: topK });
}
