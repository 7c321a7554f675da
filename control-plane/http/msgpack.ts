/**
 * The fast path for heavy clients: `application/msgpack` bodies whose vectors are float32
 * binaries (little-endian), so neither side parses JSON numbers.
 */
import { badRequest } from '../../errors/codes.js';
import { Packr } from 'msgpackr';

export const MSGPACK = 'application/msgpack';
/** The media types msgpack goes by: the registered one and the two older names clients still send. */
const MSGPACK_TYPES = new Set([MSGPACK, 'application/x-msgpack', 'application/vnd.msgpack']);

export function isMsgpackType(mediaType: string): boolean {
  return MSGPACK_TYPES.has(mediaType);
}

/** Whether an Accept header names msgpack (any of its media types). */
export function acceptsMsgpack(accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes('msgpack')) return false;
  if (accept === MSGPACK) return true;
  for (const part of accept.split(',')) if (isMsgpackType(part.split(';')[0]!.trim().toLowerCase())) return true;
  return false;
}

// Standard encoders write integers from 2^32 up as uint64: read as numbers, so an id follows the
// same 53-bit rule as in JSON (a BigInt failed the schema where JSON's number passed).
const packr = new Packr({ useRecords: false, int64AsType: 'number' });

/** Decodes a request body; binary `values` and `query` fields become Float32Arrays. */
export function decodeMsgpack(body: Buffer): unknown {
  let value: unknown;
  try {
    value = packr.unpack(body);
  } catch {
    throw badRequest('the body is not valid msgpack');
  }
  const o = value as { query?: unknown; vectors?: { values?: unknown }[] };
  if (o && typeof o === 'object') {
    if (o.query !== undefined) o.query = toFloat32(o.query, 'query');
    // Items that are not objects are left for the schema to refuse (a property set on a string threw: a 500).
    if (Array.isArray(o.vectors)) o.vectors.forEach((v, i) => v && typeof v === 'object' && (v.values = toFloat32(v.values, `vectors[${i}].values`)));
  }
  return value;
}

function toFloat32(v: unknown, where: string): unknown {
  if (!(v instanceof Uint8Array)) return v;
  if (v.byteLength % 4 !== 0) throw badRequest(`${where} is not a float32 binary (its length is not a multiple of 4)`);
  const out = new Float32Array(v.byteLength / 4);
  new Uint8Array(out.buffer).set(v);
  return out;
}

/** Float32 binary of a vector, for msgpack responses. */
export function float32Binary(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function encodeMsgpack(value: unknown): Buffer {
  return packr.pack(value);
}
