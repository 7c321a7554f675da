/**
 * The body of one `vector_log` entry (design: ../shared/design/cluster.md §3.3): a msgpack map
 * whose ids (float64) and vectors (float32) are raw little-endian binaries, so neither side
 * parses numbers one by one, as the msgpack fast path of the HTTP API does.
 *
 *   { o: 'upsert', i: bin(ids f64 LE), d: dim, v: bin(vectors f32 LE), m?: (object | null)[] }
 *   { o: 'delete', i: bin(ids f64 LE) }
 */
import { Packr } from 'msgpackr';

export type UpsertEntry = {
  op: 'upsert';
  ids: Float64Array;
  /** ids.length * dim values, the vectors back to back. */
  vectors: Float32Array;
  dim: number;
  metadata?: (Record<string, unknown> | null)[];
};
export type DeleteEntry = { op: 'delete'; ids: Float64Array };
export type LogEntry = UpsertEntry | DeleteEntry;

// Integers from 2^32 up read back as numbers (ids are safe integers), as in control-plane/http/msgpack.ts.
const packr = new Packr({ useRecords: false, int64AsType: 'number' });

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The array's bytes, little-endian. */
function leBytes(a: Float64Array | Float32Array): Uint8Array {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  if (LITTLE_ENDIAN) return bytes;
  const out = new Uint8Array(a.byteLength);
  const view = new DataView(out.buffer);
  const width = a.BYTES_PER_ELEMENT;
  for (let i = 0; i < a.length; i++) {
    if (width === 8) view.setFloat64(i * 8, a[i]!, true);
    else view.setFloat32(i * 4, a[i]!, true);
  }
  return out;
}

function fromLe<T extends Float64Array | Float32Array>(bytes: unknown, width: 8 | 4, what: string): T {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength % width !== 0) throw new Error(`log entry: ${what} is not a binary of ${width}-byte values`);
  const n = bytes.byteLength / width;
  // A copy into a buffer of its own: the decoded binary is a view into the message, maybe at an
  // unaligned offset (and Buffer#slice would not copy).
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  if (LITTLE_ENDIAN) return (width === 8 ? new Float64Array(copy.buffer, 0, n) : new Float32Array(copy.buffer, 0, n)) as T;
  const view = new DataView(copy.buffer);
  const out = width === 8 ? new Float64Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = width === 8 ? view.getFloat64(i * 8, true) : view.getFloat32(i * 4, true);
  return out as T;
}

export function encodeEntry(entry: LogEntry): Uint8Array {
  if (entry.op === 'upsert') {
    const { ids, vectors, dim, metadata } = entry;
    if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`log entry: dim must be a positive integer (got ${dim})`);
    if (vectors.length !== ids.length * dim) throw new RangeError(`log entry: ${ids.length} ids of dim ${dim} need ${ids.length * dim} values, got ${vectors.length}`);
    if (metadata && metadata.length !== ids.length) throw new RangeError(`log entry: ${ids.length} ids but ${metadata.length} metadata`);
    const map: Record<string, unknown> = { o: 'upsert', i: leBytes(ids), d: dim, v: leBytes(vectors) };
    if (metadata) map.m = metadata;
    return packr.pack(map);
  }
  if (entry.op === 'delete') return packr.pack({ o: 'delete', i: leBytes(entry.ids) });
  throw new Error(`log entry: unknown op ${(entry as { op: unknown }).op}`);
}

export function decodeEntry(bytes: Uint8Array): LogEntry {
  const map = packr.unpack(bytes) as Record<string, unknown>;
  if (!map || typeof map !== 'object') throw new Error('log entry: not a msgpack map');
  const ids = fromLe<Float64Array>(map.i, 8, 'ids');
  if (map.o === 'delete') return { op: 'delete', ids };
  if (map.o !== 'upsert') throw new Error(`log entry: unknown op ${String(map.o)}`);
  const dim = map.d as number;
  if (!Number.isInteger(dim) || dim < 1) throw new Error('log entry: bad dim');
  const vectors = fromLe<Float32Array>(map.v, 4, 'vectors');
  if (vectors.length !== ids.length * dim) throw new Error('log entry: vectors do not match ids * dim');
  const entry: UpsertEntry = { op: 'upsert', ids, vectors, dim };
  if (map.m !== undefined) {
    if (!Array.isArray(map.m) || map.m.length !== ids.length) throw new Error('log entry: metadata do not match ids');
    entry.metadata = map.m as (Record<string, unknown> | null)[];
  }
  return entry;
}
