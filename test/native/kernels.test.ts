import { describe, expect, it } from 'vitest';
import { kernelTestHooks, native } from '../../dist/engine/native.js';
import { Rng } from '../../dist/testkit/rng.js';

const F32 = ['l2sq_f32', 'ip_f32', 'cos_f32'];
const SQ8 = ['l2sq_sq8', 'ip_sq8', 'cos_sq8'];
// b rounded to half precision by the binding, then scored as a half row.
const F16 = ['l2sq_f16', 'ip_f16'];

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
  const hooks = kernelTestHooks();
  const isas = hooks.availableIsas();

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
          const want = hooks.kernelDistance('serial', k, a, b);
          const got = hooks.kernelDistance(isa, k, a, b);
          if (!close(got, want, mf)) throw new Error(`${isa} ${k} d=${d}: ${got} != ${want}`);
          checked++;
        }
        for (const k of F16) {
          const want = hooks.kernelDistance('serial', k, a, b);
          const got = hooks.kernelDistance(isa, k, a, b);
          if (!close(got, want, mf)) throw new Error(`${isa} ${k} d=${d}: ${got} != ${want}`);
          checked++;
        }
        for (const k of SQ8) {
          const want = hooks.kernelDistance('serial', k, a, code, vmin, scale);
          const got = hooks.kernelDistance(isa, k, a, code, vmin, scale);
          if (!close(got, want, mq)) throw new Error(`${isa} ${k} d=${d}: ${got} != ${want}`);
          checked++;
        }
      }
      expect(checked).toBe(257 * 8);
    });
  }

  // Bit codes against a 4-bit query: out[i] = sum over k of 2^k popcount(code_i & plane_k). Every
  // variant, serial included, against a popcount written here, for 1..13 words, with and without sel.
  function popcount32(x: number): number {
    x = x - ((x >>> 1) & 0x55555555);
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  for (const isa of isas) {
    it(`${isa} bit-code scoring matches a plain popcount for 1..13 words, with and without sel`, () => {
      const rng = new Rng(5);
      let checked = 0;
      for (let words = 1; words <= 13; words++) {
        const rows = 19;
        const word32 = () => (rng.int(65536) * 65536 + rng.int(65536)) >>> 0;
        const planes = Uint32Array.from({ length: 8 * words }, word32);
        // Some all-ones and all-zero codes: the extremes of each count.
        const codes = Uint32Array.from({ length: 2 * words * rows }, (_, i) =>
          i < 2 * words ? 0xffffffff : i < 4 * words ? 0 : word32());
        for (const withSel of [false, true]) {
          const count = withSel ? 23 : rows;
          const sel = withSel ? Uint32Array.from({ length: count }, (_, i) => (i === 0 ? rows - 1 : rng.int(rows))) : null;
          const got = hooks.kernelBits(isa, { planes, codes, words, count, sel });
          expect(got.length).toBe(count);
          for (let i = 0; i < count; i++) {
            const r = sel ? sel[i] : i;
            let want = 0;
            for (let k = 0; k < 4; k++)
              for (let h = 0; h < 2 * words; h++) want += popcount32(codes[r * 2 * words + h] & planes[k * 2 * words + h]) << k;
            if (got[i] !== want) throw new Error(`${isa} bits_dot_u4_batch words=${words} sel=${withSel} i=${i}: ${got[i]} != ${want}`);
            checked++;
          }
        }
      }
      expect(checked).toBe(13 * (19 + 23));
    });
  }

  // Batched code scoring: out[i] = <w, codes[sel ? sel[i] : i]> (f32 weights) or
  // s * <128 * hi + lo, code> (int8 weights), for every stride 1..257 and a few counts.
  const COUNTS = [1, 3, 4, 5, 17];
  const ROWS = 24;
  for (const isa of isas.filter((i) => i !== 'serial')) {
    it(`${isa} batched code scoring matches serial for every stride 1..257, with and without sel`, () => {
      const rng = new Rng(11);
      let checked = 0;
      for (let stride = 1; stride <= 257; stride++) {
        const codes = Uint8Array.from({ length: ROWS * stride }, () => rng.int(256));
        const w = Float32Array.from({ length: stride }, () => rng.gauss() * 0.05);
        const hi = Int8Array.from({ length: stride }, () => rng.int(255) - 127);
        const lo = Int8Array.from({ length: stride }, () => rng.int(129) - 64);
        const s = 1e-4 * (0.5 + rng.next());
        for (const count of COUNTS) {
          for (const withSel of [false, true]) {
            // Unordered, with repeats, reaching the last row.
            const sel = withSel ? Uint32Array.from({ length: count }, (_, i) => (i === 0 ? ROWS - 1 : rng.int(ROWS))) : null;
            const row = (i: number) => codes.subarray((sel ? sel[i] : i) * stride, ((sel ? sel[i] : i) + 1) * stride);
            const argsF = { codes, stride, count, sel, w };
            const argsI = { codes, stride, count, sel, hi, lo, s };
            const wantF = hooks.kernelBatch('serial', 'dot_u8_f32_batch', argsF);
            const gotF = hooks.kernelBatch(isa, 'dot_u8_f32_batch', argsF);
            const wantI = hooks.kernelBatch('serial', 'dot_u8_i8x2_batch', argsI);
            const gotI = hooks.kernelBatch(isa, 'dot_u8_i8x2_batch', argsI);
            expect(gotF.length).toBe(count);
            expect(gotI.length).toBe(count);
            for (let i = 0; i < count; i++) {
              const c = row(i);
              let mf = 0, mi = 0;
              for (let t = 0; t < stride; t++) {
                mf += Math.abs(w[t] * c[t]);
                mi += Math.abs(s * (128 * hi[t] + lo[t]) * c[t]);
              }
              const where = `stride=${stride} count=${count} sel=${withSel} i=${i}`;
              if (!close(gotF[i], wantF[i], mf)) throw new Error(`${isa} dot_u8_f32_batch ${where}: ${gotF[i]} != ${wantF[i]}`);
              if (!close(gotI[i], wantI[i], mi)) throw new Error(`${isa} dot_u8_i8x2_batch ${where}: ${gotI[i]} != ${wantI[i]}`);
              checked += 2;
            }
          }
        }
      }
      expect(checked).toBe(257 * 2 * 2 * COUNTS.reduce((a, b) => a + b, 0));
    });

    it(`${isa} k-means assignment tile matches serial`, () => {
      const rng = new Rng(13);
      for (const dim of [1, 2, 3, 7, 16, 33, 100, 129]) {
        for (const k of [1, 5, 8, 17, 33, 70]) {
          for (const l2 of [true, false]) {
            const n = 23;
            const x = Float32Array.from({ length: n * dim }, () => rng.gauss());
            const c = Float32Array.from({ length: k * dim }, () => rng.gauss());
            const key = (i: number, j: number) => {
              let dot = 0, nn = 0;
              for (let t = 0; t < dim; t++) {
                dot += x[i * dim + t] * c[j * dim + t];
                nn += c[j * dim + t] ** 2;
              }
              return (l2 ? nn : 0) - 2 * dot;
            };
            const want = hooks.kernelArgmin('serial', x, c, dim, l2);
            const got = hooks.kernelArgmin(isa, x, c, dim, l2);
            for (let i = 0; i < n; i++) {
              let m = 0;
              for (let t = 0; t < dim; t++) m += x[i * dim + t] ** 2;
              const mag = (m + 1) * dim * 4;
              const where = `${isa} dim=${dim} k=${k} l2=${l2} i=${i}`;
              if (!close(got.keys[i], want.keys[i], mag)) throw new Error(`${where}: key ${got.keys[i]} != ${want.keys[i]}`);
              // The label is a true minimum (labels may differ only on near ties).
              if (!close(key(i, got.labels[i]), want.keys[i], mag)) throw new Error(`${where}: label ${got.labels[i]}`);
              expect(got.labels[i]).toBeLessThan(k);
            }
          }
        }
      }
    });
  }

  // The matrix product tile of every variant (serial included) against a float64 textbook product.
  for (const isa of isas) {
    it(`${isa} matrix product tile matches the textbook product`, () => {
      const rng = new Rng(17);
      for (const [m, k, n] of [[1, 1, 1], [5, 3, 7], [13, 33, 40], [7, 384, 65], [20, 100, 129], [3, 17, 1]]) {
        const a = Float32Array.from({ length: m * k }, () => rng.gauss());
        const w = Float32Array.from({ length: n * k }, () => rng.gauss());
        const bias = Float32Array.from({ length: n }, () => rng.gauss());
        const got = hooks.kernelGemm(isa, a, w, bias, k);
        const plain = hooks.kernelGemm(isa, a, w, null, k);
        expect(got.length).toBe(m * n);
        for (let i = 0; i < m; i++)
          for (let j = 0; j < n; j++) {
            let dot = 0, mag = 0;
            for (let t = 0; t < k; t++) {
              dot += a[i * k + t] * w[j * k + t];
              mag += Math.abs(a[i * k + t] * w[j * k + t]);
            }
            const where = `${isa} m=${m} k=${k} n=${n} (${i}, ${j})`;
            if (!close(got[i * n + j], dot + bias[j], mag)) throw new Error(`${where}: ${got[i * n + j]} != ${dot + bias[j]}`);
            if (!close(plain[i * n + j], dot, mag)) throw new Error(`${where} without bias: ${plain[i * n + j]} != ${dot}`);
          }
      }
    });
  }

  // The bfloat16 tile: the reference against a float64 product of the inputs rounded to bfloat16
  // (exact but for float sums), and the AVX512-BF16 tile against the reference, where the CPU has it.
  const bf16 = (x: number) => {
    const f = new Float32Array([x]);
    const u = new Uint32Array(f.buffer);
    u[0] = ((u[0] + 0x7fff + ((u[0] >>> 16) & 1)) >>> 16) << 16;
    return f[0];
  };
  const bf16Shapes = [[1, 1, 1], [5, 3, 7], [13, 33, 40], [7, 384, 65], [20, 100, 129], [3, 17, 1], [70, 1536, 384], [2, 384, 33]];
  it('the bfloat16 matrix product reference matches the textbook product of bfloat16 inputs', () => {
    const rng = new Rng(19);
    for (const [m, k, n] of bf16Shapes.slice(0, 6)) {
      const a = Float32Array.from({ length: m * k }, () => rng.gauss());
      const w = Float32Array.from({ length: n * k }, () => rng.gauss());
      const bias = Float32Array.from({ length: n }, () => rng.gauss());
      const got = hooks.kernelGemmBf16('reference', a, w, bias, k);
      for (let i = 0; i < m; i++)
        for (let j = 0; j < n; j++) {
          let dot = bias[j], mag = 0;
          for (let t = 0; t < k; t++) {
            dot += bf16(a[i * k + t]) * bf16(w[j * k + t]);
            mag += Math.abs(a[i * k + t] * w[j * k + t]);
          }
          if (!close(got[i * n + j], dot, mag)) throw new Error(`m=${m} k=${k} n=${n} (${i}, ${j}): ${got[i * n + j]} != ${dot}`);
        }
    }
  });
  const hasBf16 = (() => {
    try {
      hooks.kernelGemmBf16('native', new Float32Array(1), new Float32Array(1), null, 1);
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!hasBf16)('the AVX512-BF16 matrix product tile matches its reference (skipped where the CPU lacks AVX512-BF16)', () => {
    const rng = new Rng(23);
    for (const [m, k, n] of bf16Shapes) {
      const a = Float32Array.from({ length: m * k }, () => rng.gauss());
      const w = Float32Array.from({ length: n * k }, () => rng.gauss());
      const bias = Float32Array.from({ length: n }, () => rng.gauss());
      for (const b of [bias, null]) {
        const got = hooks.kernelGemmBf16('native', a, w, b, k);
        const want = hooks.kernelGemmBf16('reference', a, w, b, k);
        expect(got.length).toBe(m * n);
        for (let i = 0; i < m * n; i++) {
          let mag = 0;
          for (let t = 0; t < k; t++) mag += Math.abs(a[Math.floor(i / n) * k + t] * w[(i % n) * k + t]);
          if (!close(got[i], want[i], mag)) throw new Error(`m=${m} k=${k} n=${n} at ${i}: ${got[i]} != ${want[i]}`);
        }
      }
    }
  });

  it('every variant computes the erf GELU within 2e-6 relative', () => {
    // erf by Abramowitz and Stegun 7.1.26 in float64 (|error| < 1.5e-7) as the textbook value.
    const erf = (x: number) => {
      const t = 1 / (1 + 0.3275911 * Math.abs(x));
      const y = 1 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * Math.exp(-x * x);
      return x < 0 ? -y : y;
    };
    const x = Float32Array.from({ length: 2001 + 3 }, (_, i) => (i - 1000) / 100); // -10..10, odd tail
    for (const isa of isas) {
      const got = hooks.kernelElementwise(isa, 'gelu', x);
      for (let i = 0; i < x.length; i++) {
        const want = 0.5 * x[i] * (1 + erf(x[i] / Math.SQRT2));
        if (Math.abs(got[i] - want) > 2e-6 * Math.max(1, Math.abs(x[i]))) throw new Error(`${isa} gelu(${x[i]}) = ${got[i]}, want ${want}`);
      }
    }
  });

  it('every variant computes softmax to float precision, extreme inputs included', () => {
    const rng = new Rng(23);
    for (const n of [1, 2, 7, 16, 33, 100, 257]) {
      for (const spread of [1, 10, 60]) {
        const x = Float32Array.from({ length: n }, () => rng.gauss() * spread);
        const m = Math.max(...x);
        const e = Array.from(x, (v) => Math.exp(v - m));
        const sum = e.reduce((a, b) => a + b, 0);
        for (const isa of isas) {
          const got = hooks.kernelElementwise(isa, 'softmax', x);
          for (let i = 0; i < n; i++) {
            const want = e[i] / sum;
            // x - max is rounded to float first: a relative error of its size times 2^-23 in e^x.
            if (Math.abs(got[i] - want) > want * (2e-6 + 1.2e-7 * Math.abs(x[i] - m)) + 1e-30) throw new Error(`${isa} n=${n} spread=${spread} [${i}]: ${got[i]} != ${want}`);
          }
        }
      }
    }
  });

  it('every variant narrows floats to halves and widens them back as the serial reference does, bit for bit', () => {
    const isNanHalf = (h: number) => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;
    // The reference on values whose half is known (nearest even, overflow to infinity, subnormals).
    const known: [number, number][] = [
      [1, 0x3c00], [-2, 0xc000], [0.1, 0x2e66], [65504, 0x7bff], [65519.99, 0x7bff], [65520, 0x7c00], [1e6, 0x7c00],
      [-Infinity, 0xfc00], [2 ** -24, 0x0001], [2 ** -25, 0x0000], [3 * 2 ** -26, 0x0001], [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02],
      [-0, 0x8000], [1e-40, 0x0000],
    ];
    const serial = hooks.kernelHalves('serial', Float32Array.from(known.map(([v]) => v)));
    expect(Array.from(serial)).toEqual(known.map(([, h]) => h));
    // Every length from 0 to 40 (each variant's tail) and a 768-d row and some, over values of
    // every magnitude a half holds and beyond, ties and subnormals among them.
    const rng = new Rng(7);
    const specials = [0, -0, 1e-40, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 65504, 65520, -65520, Infinity, -Infinity, 1 + 2 ** -11, 1 + 3 * 2 ** -11];
    const sample = (n: number) =>
      Float32Array.from({ length: n }, (_, i) => (i % 7 === 3 ? specials[i % specials.length]! : (rng.next() - 0.5) * 2 ** Math.floor(rng.next() * 44 - 28)));
    for (const n of [...Array.from({ length: 41 }, (_, n) => n), 773]) {
      const values = sample(n);
      values.set([NaN].slice(0, n >= 5 ? 1 : 0), Math.min(4, Math.max(0, n - 1)));
      const reference = hooks.kernelHalves('serial', values);
      for (const isa of isas) {
        const narrowed = hooks.kernelHalves(isa, values);
        for (let i = 0; i < n; i++) {
          if (Number.isNaN(values[i])) expect(isNanHalf(narrowed[i]!), `${isa} n=${n} NaN`).toBe(true);
          else expect(narrowed[i], `${isa} n=${n} value ${values[i]}`).toBe(reference[i]);
        }
      }
    }
    // Every half widened.
    const halves = Uint16Array.from({ length: 65536 + 3 }, (_, h) => h & 0xffff);
    const widened = hooks.kernelHalves('serial', halves);
    expect(widened[0x3c00]).toBe(1);
    expect(widened[0x0001]).toBe(2 ** -24);
    expect(widened[0xfc00]).toBe(-Infinity);
    for (const isa of isas) {
      const out = hooks.kernelHalves(isa, halves);
      for (let h = 0; h < halves.length; h++) {
        if (Number.isNaN(widened[h])) expect(Number.isNaN(out[h]), `${isa} half ${h}`).toBe(true);
        else if (out[h] !== widened[h]) expect(out[h], `${isa} half ${h.toString(16)}`).toBe(widened[h]);
      }
    }
  });

  it('serial half-row kernels score the half-rounded row exactly as float kernels would', () => {
    const a = Float32Array.of(1, -2, 0.5, 3);
    const b = Float32Array.of(0.1, 1e-5, 70000, -0.333); // 0.1 and -0.333 round; 70000 overflows to inf
    const halves = Float32Array.of(0.0999755859375, 1.0013580322265625e-5, Infinity, -0.3330078125);
    expect(hooks.kernelDistance('serial', 'ip_f16', a, b)).toBe(Infinity);
    expect(hooks.kernelDistance('serial', 'ip_f32', a, halves)).toBe(Infinity);
    const finite = Float32Array.of(0.1, 1e-5, 2, -0.333);
    const finiteHalves = Float32Array.of(0.0999755859375, 1.0013580322265625e-5, 2, -0.3330078125);
    expect(hooks.kernelDistance('serial', 'l2sq_f16', a, finite)).toBeCloseTo(hooks.kernelDistance('serial', 'l2sq_f32', a, finiteHalves), 5);
    expect(hooks.kernelDistance('serial', 'ip_f16', a, finite)).toBeCloseTo(hooks.kernelDistance('serial', 'ip_f32', a, finiteHalves), 5);
    expect(hooks.kernelDistance('serial', 'ip_f16', a, finite)).not.toBeCloseTo(hooks.kernelDistance('serial', 'ip_f32', a, finite), 5);
  });

  it('serial batched code scoring computes the textbook values', () => {
    const codes = Uint8Array.of(1, 2, 3, 4, 10, 20, 30, 40, 0, 255, 0, 1);
    const w = Float32Array.of(1, 0.5, -1, 2);
    const f = hooks.kernelBatch('serial', 'dot_u8_f32_batch', { codes, stride: 4, count: 3, w });
    expect(Array.from(f)).toEqual([1 + 1 - 3 + 8, 10 + 10 - 30 + 80, 127.5 + 2]);
    const g = hooks.kernelBatch('serial', 'dot_u8_f32_batch', { codes, stride: 4, count: 2, w, sel: Uint32Array.of(2, 0) });
    expect(Array.from(g)).toEqual([129.5, 7]);
    const hi = Int8Array.of(1, 0, -1, 2), lo = Int8Array.of(0, 64, 3, -5);
    const q = hooks.kernelBatch('serial', 'dot_u8_i8x2_batch', { codes, stride: 4, count: 1, hi, lo, s: 0.5 });
    // 128 * (1 - 3 + 8) + (128 + 9 - 20) = 885
    expect(q[0]).toBeCloseTo(0.5 * 885, 4);
    expect(() => hooks.kernelBatch('serial', 'dot_u8_f32_batch', { codes, stride: 4, count: 4, w })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
    expect(() => hooks.kernelBatch('serial', 'dot_u8_f32_batch', { codes, stride: 4, count: 1, w, sel: Uint32Array.of(3) })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });

  it('serial kernels compute the textbook values', () => {
    const a = Float32Array.of(1, 2, 3);
    const b = Float32Array.of(4, 5, 6);
    expect(hooks.kernelDistance('serial', 'l2sq_f32', a, b)).toBeCloseTo(27, 5);
    expect(hooks.kernelDistance('serial', 'ip_f32', a, b)).toBeCloseTo(32, 5);
    expect(hooks.kernelDistance('serial', 'cos_f32', a, b)).toBeCloseTo(1 - 32 / Math.sqrt(14 * 77), 6);
    expect(hooks.kernelDistance('serial', 'cos_f32', a, new Float32Array(3))).toBe(1);
    const code = Uint8Array.of(0, 255, 10);
    const vmin = Float32Array.of(0, -1, 1);
    const scale = Float32Array.of(1, 0.01, 0.5);
    // decoded: 0, 1.55, 6
    expect(hooks.kernelDistance('serial', 'l2sq_sq8', a, code, vmin, scale)).toBeCloseTo(1 + 0.45 ** 2 + 9, 4);
    expect(hooks.kernelDistance('serial', 'ip_sq8', a, code, vmin, scale)).toBeCloseTo(3.1 + 18, 4);
  });

  it('rejects wrong arguments with a coded error, not a crash', () => {
    expect(() => hooks.kernelDistance('serial', 'l2sq_f32', Float32Array.of(1), Float32Array.of(1, 2))).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
    expect(() => hooks.kernelDistance('quantum', 'l2sq_f32', Float32Array.of(1), Float32Array.of(1))).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});
