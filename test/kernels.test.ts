import { describe, expect, it } from 'vitest';
import { native } from '../dist/engine/index.js';
import { Rng } from '../dist/bench/ann/rng.js';

const F32 = ['l2sq_f32', 'ip_f32', 'cos_f32'];
const SQ8 = ['l2sq_sq8', 'ip_sq8', 'cos_sq8'];

// Float sums of d terms carry rounding in proportion to the terms' magnitude, not the result's.
function close(a: number, b: number, magnitude: number): boolean {
  return Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b)) + 1e-6 * magnitude;
}

function magnitude(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m += Math.abs(a[i] * b[i]) + a[i] * a[i] + b[i] * b[i];
  return m;
}

describe('kernels', () => {
  const isas = native.availableIsas();

  it('runs on a detected instruction set, serial always available', () => {
    expect(isas).toContain('serial');
    expect(isas).toContain(native.activeIsa());
  });

  for (const isa of isas.filter((i) => i !== 'serial')) {
    it(`${isa} matches serial for every kernel and dimension 1..257`, () => {
      const rng = new Rng(7);
      let checked = 0;
      for (let d = 1; d <= 257; d++) {
        const a = Float32Array.from({ length: d }, () => rng.gauss() * 3);
        const b = Float32Array.from({ length: d }, () => rng.gauss() * 3);
        const code = Uint8Array.from({ length: d }, () => rng.int(256));
        const vmin = Float32Array.from({ length: d }, () => -2 + rng.gauss());
        const scale = Float32Array.from({ length: d }, () => 0.02 + rng.next() * 0.03);
        const decoded = Float32Array.from(code, (c, i) => vmin[i] + scale[i] * c);
        const mf = magnitude(a, b);
        const mq = magnitude(a, decoded);
        for (const k of F32) {
          const want = native.kernelDistance('serial', k, a, b);
          const got = native.kernelDistance(isa, k, a, b);
          if (!close(got, want, mf)) throw new Error(`${isa} ${k} d=${d}: ${got} != ${want}`);
          checked++;
        }
        for (const k of SQ8) {
          const want = native.kernelDistance('serial', k, a, code, vmin, scale);
          const got = native.kernelDistance(isa, k, a, code, vmin, scale);
          if (!close(got, want, mq)) throw new Error(`${isa} ${k} d=${d}: ${got} != ${want}`);
          checked++;
        }
      }
      expect(checked).toBe(257 * 6);
    });
  }

  it('serial kernels compute the textbook values', () => {
    const a = Float32Array.of(1, 2, 3);
    const b = Float32Array.of(4, 5, 6);
    expect(native.kernelDistance('serial', 'l2sq_f32', a, b)).toBeCloseTo(27, 5);
    expect(native.kernelDistance('serial', 'ip_f32', a, b)).toBeCloseTo(32, 5);
    expect(native.kernelDistance('serial', 'cos_f32', a, b)).toBeCloseTo(1 - 32 / Math.sqrt(14 * 77), 6);
    expect(native.kernelDistance('serial', 'cos_f32', a, new Float32Array(3))).toBe(1);
    const code = Uint8Array.of(0, 255, 10);
    const vmin = Float32Array.of(0, -1, 1);
    const scale = Float32Array.of(1, 0.01, 0.5);
    // decoded: 0, 1.55, 6
    expect(native.kernelDistance('serial', 'l2sq_sq8', a, code, vmin, scale)).toBeCloseTo(1 + 0.45 ** 2 + 9, 4);
    expect(native.kernelDistance('serial', 'ip_sq8', a, code, vmin, scale)).toBeCloseTo(3.1 + 18, 4);
  });

  it('rejects wrong arguments with a coded error, not a crash', () => {
    expect(() => native.kernelDistance('serial', 'l2sq_f32', Float32Array.of(1), Float32Array.of(1, 2))).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
    expect(() => native.kernelDistance('quantum', 'l2sq_f32', Float32Array.of(1), Float32Array.of(1))).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});
