// The distance and code-scoring kernels of distance_avx2.cpp and distance_avx512.cpp, written once
// over a lane type Ln that each of those files defines with its own intrinsics. Included only by
// those files and instantiated there, so each variant compiles with its own -m flags. Everything
// here has internal linkage (an unnamed namespace, like panels.h): the AVX2 and AVX-512
// instantiations are different functions, and the linker can never fold them into one and run
// AVX-512 instructions on a CPU with AVX2 only.
//
// In lanes of L floats: independent accumulators to hide FMA latency (four over 4L at a time, then
// one 2L and one L step, for l2sq and ip; two per sum over 2L for cos and the half rows), one
// masked step for the last d % L (no element past d is ever read; masked-off lanes load as zero
// and add nothing), one horizontal sum at the end. Every addition's order is fixed here, the
// same for both instruction sets as before they shared this code, so results are unchanged.
//
// Ln provides, as static members:
//   V, L                      the vector type and its float lanes
//   zero, load, add, sub, fmadd(a, b, c) = a * b + c
//   Tail, tail(r), load_tail  the last r (1..L-1) lanes: a mask, and a masked load of floats
//   codes(c), codes_tail(c, m)  L (or the tail's) uint8 codes widened to float
//   reduce(v)                 the horizontal sum
//   half(row)                 L half-precision values widened to float
//   kHalfTailMasked           true: half_tail(row, m) loads the tail's halves; false: the tail
//                             converts one by one with half1(h), added after the vector sum
//   batch_sum4(out, a0..a3), batch_sum1(a)  the batch scorer's horizontal sums (see below)
//   store(p, v), store_half(p, v)  L floats stored, or narrowed to halves (nearest even) and stored
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable {
namespace {

inline float cos_finish(float dot, float na, float nb) {
  if (na == 0.0f || nb == 0.0f) return 1.0f;
  return 1.0f - dot / (__builtin_sqrtf(na) * __builtin_sqrtf(nb));
}

// x = vmin + scale * code for L full lanes (exactly L code bytes read).
template <class Ln>
inline typename Ln::V decode(const uint8_t* c, const float* vmin, const float* scale) {
  return Ln::fmadd(Ln::codes(c), Ln::load(scale), Ln::load(vmin));
}

// The codes first: AVX2 gathers them byte by byte, and loads issued before that loop would hold
// registers across it (spilling an accumulator).
template <class Ln>
inline typename Ln::V decode_tail(const uint8_t* c, const float* vmin, const float* scale, typename Ln::Tail m) {
  const typename Ln::V cf = Ln::codes_tail(c, m);
  return Ln::fmadd(cf, Ln::load_tail(scale, m), Ln::load_tail(vmin, m));
}

template <class Ln>
float l2sq_f32(const float* a, const float* b, size_t d) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  V s0 = Ln::zero(), s1 = Ln::zero(), s2 = Ln::zero(), s3 = Ln::zero();
  size_t i = 0;
  for (; i + 4 * L <= d; i += 4 * L) {
    V t0 = Ln::sub(Ln::load(a + i), Ln::load(b + i));
    V t1 = Ln::sub(Ln::load(a + i + L), Ln::load(b + i + L));
    V t2 = Ln::sub(Ln::load(a + i + 2 * L), Ln::load(b + i + 2 * L));
    V t3 = Ln::sub(Ln::load(a + i + 3 * L), Ln::load(b + i + 3 * L));
    s0 = Ln::fmadd(t0, t0, s0);
    s1 = Ln::fmadd(t1, t1, s1);
    s2 = Ln::fmadd(t2, t2, s2);
    s3 = Ln::fmadd(t3, t3, s3);
  }
  if (i + 2 * L <= d) {
    V t0 = Ln::sub(Ln::load(a + i), Ln::load(b + i));
    V t1 = Ln::sub(Ln::load(a + i + L), Ln::load(b + i + L));
    s0 = Ln::fmadd(t0, t0, s0);
    s1 = Ln::fmadd(t1, t1, s1);
    i += 2 * L;
  }
  if (i + L <= d) {
    V t = Ln::sub(Ln::load(a + i), Ln::load(b + i));
    s2 = Ln::fmadd(t, t, s2);
    i += L;
  }
  if (i < d) {
    const auto m = Ln::tail(d - i);
    V t = Ln::sub(Ln::load_tail(a + i, m), Ln::load_tail(b + i, m));
    s3 = Ln::fmadd(t, t, s3);
  }
  return Ln::reduce(Ln::add(Ln::add(s0, s1), Ln::add(s2, s3)));
}

template <class Ln>
float ip_f32(const float* a, const float* b, size_t d) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  V s0 = Ln::zero(), s1 = Ln::zero(), s2 = Ln::zero(), s3 = Ln::zero();
  size_t i = 0;
  for (; i + 4 * L <= d; i += 4 * L) {
    s0 = Ln::fmadd(Ln::load(a + i), Ln::load(b + i), s0);
    s1 = Ln::fmadd(Ln::load(a + i + L), Ln::load(b + i + L), s1);
    s2 = Ln::fmadd(Ln::load(a + i + 2 * L), Ln::load(b + i + 2 * L), s2);
    s3 = Ln::fmadd(Ln::load(a + i + 3 * L), Ln::load(b + i + 3 * L), s3);
  }
  if (i + 2 * L <= d) {
    s0 = Ln::fmadd(Ln::load(a + i), Ln::load(b + i), s0);
    s1 = Ln::fmadd(Ln::load(a + i + L), Ln::load(b + i + L), s1);
    i += 2 * L;
  }
  if (i + L <= d) {
    s2 = Ln::fmadd(Ln::load(a + i), Ln::load(b + i), s2);
    i += L;
  }
  if (i < d) {
    const auto m = Ln::tail(d - i);
    s3 = Ln::fmadd(Ln::load_tail(a + i, m), Ln::load_tail(b + i, m), s3);
  }
  return Ln::reduce(Ln::add(Ln::add(s0, s1), Ln::add(s2, s3)));
}

template <class Ln>
float cos_f32(const float* a, const float* b, size_t d) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  V dot0 = Ln::zero(), dot1 = Ln::zero();
  V na0 = Ln::zero(), na1 = Ln::zero();
  V nb0 = Ln::zero(), nb1 = Ln::zero();
  size_t i = 0;
  for (; i + 2 * L <= d; i += 2 * L) {
    V x0 = Ln::load(a + i), y0 = Ln::load(b + i);
    V x1 = Ln::load(a + i + L), y1 = Ln::load(b + i + L);
    dot0 = Ln::fmadd(x0, y0, dot0);
    na0 = Ln::fmadd(x0, x0, na0);
    nb0 = Ln::fmadd(y0, y0, nb0);
    dot1 = Ln::fmadd(x1, y1, dot1);
    na1 = Ln::fmadd(x1, x1, na1);
    nb1 = Ln::fmadd(y1, y1, nb1);
  }
  if (i + L <= d) {
    V x = Ln::load(a + i), y = Ln::load(b + i);
    dot0 = Ln::fmadd(x, y, dot0);
    na0 = Ln::fmadd(x, x, na0);
    nb0 = Ln::fmadd(y, y, nb0);
    i += L;
  }
  if (i < d) {
    const auto m = Ln::tail(d - i);
    V x = Ln::load_tail(a + i, m), y = Ln::load_tail(b + i, m);
    dot1 = Ln::fmadd(x, y, dot1);
    na1 = Ln::fmadd(x, x, na1);
    nb1 = Ln::fmadd(y, y, nb1);
  }
  return cos_finish(Ln::reduce(Ln::add(dot0, dot1)), Ln::reduce(Ln::add(na0, na1)), Ln::reduce(Ln::add(nb0, nb1)));
}

template <class Ln>
float l2sq_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  V s0 = Ln::zero(), s1 = Ln::zero(), s2 = Ln::zero(), s3 = Ln::zero();
  size_t i = 0;
  for (; i + 4 * L <= d; i += 4 * L) {
    V t0 = Ln::sub(Ln::load(q + i), decode<Ln>(code + i, vmin + i, scale + i));
    V t1 = Ln::sub(Ln::load(q + i + L), decode<Ln>(code + i + L, vmin + i + L, scale + i + L));
    V t2 = Ln::sub(Ln::load(q + i + 2 * L), decode<Ln>(code + i + 2 * L, vmin + i + 2 * L, scale + i + 2 * L));
    V t3 = Ln::sub(Ln::load(q + i + 3 * L), decode<Ln>(code + i + 3 * L, vmin + i + 3 * L, scale + i + 3 * L));
    s0 = Ln::fmadd(t0, t0, s0);
    s1 = Ln::fmadd(t1, t1, s1);
    s2 = Ln::fmadd(t2, t2, s2);
    s3 = Ln::fmadd(t3, t3, s3);
  }
  if (i + 2 * L <= d) {
    V t0 = Ln::sub(Ln::load(q + i), decode<Ln>(code + i, vmin + i, scale + i));
    V t1 = Ln::sub(Ln::load(q + i + L), decode<Ln>(code + i + L, vmin + i + L, scale + i + L));
    s0 = Ln::fmadd(t0, t0, s0);
    s1 = Ln::fmadd(t1, t1, s1);
    i += 2 * L;
  }
  if (i + L <= d) {
    V t = Ln::sub(Ln::load(q + i), decode<Ln>(code + i, vmin + i, scale + i));
    s2 = Ln::fmadd(t, t, s2);
    i += L;
  }
  if (i < d) {
    const auto m = Ln::tail(d - i);
    V t = Ln::sub(Ln::load_tail(q + i, m), decode_tail<Ln>(code + i, vmin + i, scale + i, m));
    s3 = Ln::fmadd(t, t, s3);
  }
  return Ln::reduce(Ln::add(Ln::add(s0, s1), Ln::add(s2, s3)));
}

template <class Ln>
float ip_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  V s0 = Ln::zero(), s1 = Ln::zero(), s2 = Ln::zero(), s3 = Ln::zero();
  size_t i = 0;
  for (; i + 4 * L <= d; i += 4 * L) {
    s0 = Ln::fmadd(Ln::load(q + i), decode<Ln>(code + i, vmin + i, scale + i), s0);
    s1 = Ln::fmadd(Ln::load(q + i + L), decode<Ln>(code + i + L, vmin + i + L, scale + i + L), s1);
    s2 = Ln::fmadd(Ln::load(q + i + 2 * L), decode<Ln>(code + i + 2 * L, vmin + i + 2 * L, scale + i + 2 * L), s2);
    s3 = Ln::fmadd(Ln::load(q + i + 3 * L), decode<Ln>(code + i + 3 * L, vmin + i + 3 * L, scale + i + 3 * L), s3);
  }
  if (i + 2 * L <= d) {
    s0 = Ln::fmadd(Ln::load(q + i), decode<Ln>(code + i, vmin + i, scale + i), s0);
    s1 = Ln::fmadd(Ln::load(q + i + L), decode<Ln>(code + i + L, vmin + i + L, scale + i + L), s1);
    i += 2 * L;
  }
  if (i + L <= d) {
    s2 = Ln::fmadd(Ln::load(q + i), decode<Ln>(code + i, vmin + i, scale + i), s2);
    i += L;
  }
  if (i < d) {
    const auto m = Ln::tail(d - i);
    s3 = Ln::fmadd(Ln::load_tail(q + i, m), decode_tail<Ln>(code + i, vmin + i, scale + i, m), s3);
  }
  return Ln::reduce(Ln::add(Ln::add(s0, s1), Ln::add(s2, s3)));
}

template <class Ln>
float cos_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  V dot0 = Ln::zero(), dot1 = Ln::zero();
  V nq0 = Ln::zero(), nq1 = Ln::zero();
  V nx0 = Ln::zero(), nx1 = Ln::zero();
  size_t i = 0;
  for (; i + 2 * L <= d; i += 2 * L) {
    V y0 = Ln::load(q + i), x0 = decode<Ln>(code + i, vmin + i, scale + i);
    V y1 = Ln::load(q + i + L), x1 = decode<Ln>(code + i + L, vmin + i + L, scale + i + L);
    dot0 = Ln::fmadd(y0, x0, dot0);
    nq0 = Ln::fmadd(y0, y0, nq0);
    nx0 = Ln::fmadd(x0, x0, nx0);
    dot1 = Ln::fmadd(y1, x1, dot1);
    nq1 = Ln::fmadd(y1, y1, nq1);
    nx1 = Ln::fmadd(x1, x1, nx1);
  }
  if (i + L <= d) {
    V y = Ln::load(q + i), x = decode<Ln>(code + i, vmin + i, scale + i);
    dot0 = Ln::fmadd(y, x, dot0);
    nq0 = Ln::fmadd(y, y, nq0);
    nx0 = Ln::fmadd(x, x, nx0);
    i += L;
  }
  if (i < d) {
    const auto m = Ln::tail(d - i);
    V y = Ln::load_tail(q + i, m), x = decode_tail<Ln>(code + i, vmin + i, scale + i, m);
    dot1 = Ln::fmadd(y, x, dot1);
    nq1 = Ln::fmadd(y, y, nq1);
    nx1 = Ln::fmadd(x, x, nx1);
  }
  return cos_finish(Ln::reduce(Ln::add(dot0, dot1)), Ln::reduce(Ln::add(nq0, nq1)), Ln::reduce(Ln::add(nx0, nx1)));
}

// Half rows: two accumulators, 2L then L at a time, then the tail (see kHalfTailMasked).
template <class Ln>
float l2sq_f16(const float* q, const uint16_t* row, size_t d) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  V s0 = Ln::zero(), s1 = Ln::zero();
  size_t i = 0;
  for (; i + 2 * L <= d; i += 2 * L) {
    V t0 = Ln::sub(Ln::load(q + i), Ln::half(row + i));
    V t1 = Ln::sub(Ln::load(q + i + L), Ln::half(row + i + L));
    s0 = Ln::fmadd(t0, t0, s0);
    s1 = Ln::fmadd(t1, t1, s1);
  }
  if (i + L <= d) {
    V t = Ln::sub(Ln::load(q + i), Ln::half(row + i));
    s0 = Ln::fmadd(t, t, s0);
    i += L;
  }
  if constexpr (Ln::kHalfTailMasked) {
    if (i < d) {
      const auto m = Ln::tail(d - i);
      V t = Ln::sub(Ln::load_tail(q + i, m), Ln::half_tail(row + i, m));
      s0 = Ln::fmadd(t, t, s0);
    }
    return Ln::reduce(Ln::add(s0, s1));
  } else {
    float s = Ln::reduce(Ln::add(s0, s1));
    for (; i < d; ++i) {
      const float t = q[i] - Ln::half1(row[i]);
      s += t * t;
    }
    return s;
  }
}

template <class Ln>
float ip_f16(const float* q, const uint16_t* row, size_t d) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  V s0 = Ln::zero(), s1 = Ln::zero();
  size_t i = 0;
  for (; i + 2 * L <= d; i += 2 * L) {
    s0 = Ln::fmadd(Ln::load(q + i), Ln::half(row + i), s0);
    s1 = Ln::fmadd(Ln::load(q + i + L), Ln::half(row + i + L), s1);
  }
  if (i + L <= d) {
    s0 = Ln::fmadd(Ln::load(q + i), Ln::half(row + i), s0);
    i += L;
  }
  if constexpr (Ln::kHalfTailMasked) {
    if (i < d) {
      const auto m = Ln::tail(d - i);
      s0 = Ln::fmadd(Ln::load_tail(q + i, m), Ln::half_tail(row + i, m), s0);
    }
    return Ln::reduce(Ln::add(s0, s1));
  } else {
    float s = Ln::reduce(Ln::add(s0, s1));
    for (; i < d; ++i) s += q[i] * Ln::half1(row[i]);
    return s;
  }
}

// Four codes a step sharing the weight loads, whole groups of L (the weights are zero past
// stride); batch_sum4 writes the four sums at once, batch_sum1 sums a code of the remainder.
template <class Ln>
void dot_u8_f32_batch(const float* w, const uint8_t* codes, size_t stride, const uint32_t* sel, size_t count,
                      float* out) {
  using V = typename Ln::V;
  constexpr size_t L = Ln::L;
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const uint8_t* c0 = codes + (sel ? sel[i] : i) * stride;
    const uint8_t* c1 = codes + (sel ? sel[i + 1] : i + 1) * stride;
    const uint8_t* c2 = codes + (sel ? sel[i + 2] : i + 2) * stride;
    const uint8_t* c3 = codes + (sel ? sel[i + 3] : i + 3) * stride;
    V a0 = Ln::zero(), a1 = Ln::zero(), a2 = Ln::zero(), a3 = Ln::zero();
    for (size_t t = 0; t < stride; t += L) {
      const V wv = Ln::load(w + t);
      a0 = Ln::fmadd(wv, Ln::codes(c0 + t), a0);
      a1 = Ln::fmadd(wv, Ln::codes(c1 + t), a1);
      a2 = Ln::fmadd(wv, Ln::codes(c2 + t), a2);
      a3 = Ln::fmadd(wv, Ln::codes(c3 + t), a3);
    }
    Ln::batch_sum4(out + i, a0, a1, a2, a3);
  }
  for (; i < count; ++i) {
    const uint8_t* c = codes + (sel ? sel[i] : i) * stride;
    V a = Ln::zero();
    for (size_t t = 0; t < stride; t += L) a = Ln::fmadd(Ln::load(w + t), Ln::codes(c + t), a);
    out[i] = Ln::batch_sum1(a);
  }
}

// out[i] = in[i] converted, for n values: `step` converts L at a time; the last n % L go through
// a zeroed buffer of L, so nothing past n is read or written and no scalar helper (an
// out-of-line inline function compiled with these -m flags) is needed.
template <size_t L, class In, class Out, class Step>
void convert_lanes(const In* in, Out* out, size_t n, Step step) {
  size_t i = 0;
  for (; i + L <= n; i += L) step(in + i, out + i);
  if (i == n) return;
  In rest[L] = {};
  Out done[L];
  for (size_t k = 0; i + k < n; ++k) rest[k] = in[i + k];
  step(rest, done);
  for (size_t k = 0; i + k < n; ++k) out[i + k] = done[k];
}

// Floats narrowed to halves, rounded to nearest even.
template <class Ln>
void f32_to_f16(const float* in, uint16_t* out, size_t n) {
  convert_lanes<Ln::L>(in, out, n, [](const float* f, uint16_t* h) { Ln::store_half(h, Ln::load(f)); });
}

// Halves widened to floats.
template <class Ln>
void f16_to_f32(const uint16_t* in, float* out, size_t n) {
  convert_lanes<Ln::L>(in, out, n, [](const uint16_t* h, float* f) { Ln::store(f, Ln::half(h)); });
}

}  // namespace
}  // namespace sable
