/**
 * Reads a `.safetensors` file (an 8-byte little-endian header length, a JSON header naming each
 * tensor's dtype, shape and byte range, then the data) into float32 arrays. F16 and BF16 tensors
 * are widened exactly; integer tensors are skipped (a BERT checkpoint's position_ids).
 */
import { readFileSync } from 'node:fs';

interface Entry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

export interface Tensor {
  shape: number[];
  data: Float32Array;
}

let f16Table: Float32Array | null = null;

/** Every half-precision bit pattern as a float (subnormals, infinities and NaN included). */
function halfTable(): Float32Array {
  if (f16Table) return f16Table;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    t[h] = exp === 0 ? sign * frac * 2 ** -24 : exp === 31 ? (frac ? NaN : sign * Infinity) : sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return (f16Table = t);
}

export function readSafetensors(path: string): Map<string, Tensor> {
  const file = readFileSync(path);
  if (file.length < 8) throw new Error(`${path}: not a safetensors file (too short)`);
  const headerLength = Number(file.readBigUInt64LE(0));
  if (headerLength <= 0 || 8 + headerLength > file.length) throw new Error(`${path}: not a safetensors file (bad header length)`);
  const header = JSON.parse(file.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, Entry>;
  const base = 8 + headerLength;
  const out = new Map<string, Tensor>();
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [start, end] = e.data_offsets;
    const count = e.shape.reduce((a, b) => a * b, 1);
    if (start < 0 || end < start || base + end > file.length) throw new Error(`${path}: tensor ${name} lies outside the file`);
    const bytes = file.subarray(base + start, base + end);
    const data = new Float32Array(count);
    if (e.dtype === 'F32' && bytes.length === count * 4) {
      new Uint8Array(data.buffer).set(bytes);
    } else if ((e.dtype === 'F16' || e.dtype === 'BF16') && bytes.length === count * 2) {
      const table = e.dtype === 'F16' ? halfTable() : null;
      const u32 = new Uint32Array(data.buffer);
      for (let i = 0; i < count; i++) {
        const bits = bytes[2 * i] | (bytes[2 * i + 1] << 8);
        if (table) data[i] = table[bits];
        else u32[i] = bits << 16;
      }
    } else if (e.dtype.startsWith('I') || e.dtype.startsWith('U')) {
      continue;
    } else {
      throw new Error(`${path}: tensor ${name} has dtype ${e.dtype} and ${bytes.length} bytes for ${count} values`);
    }
    out.set(name, { shape: e.shape, data });
  }
  return out;
}
