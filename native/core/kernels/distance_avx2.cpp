// AVX2 + FMA kernels: 8 floats a step, four independent accumulators in the main loop (32 floats
// an iteration) to hide FMA latency, one horizontal sum at the end, and a masked tail
// (vmaskmovps) so no element past d is ever read, for any d including d < 8.
//
// Everything here has internal linkage and only <immintrin.h> is included, so no out-of-line
// copy of an inline function compiled with AVX2 can be picked by the linker for baseline code.
#if !defined(__AVX2__) || !defined(__FMA__)
#error "distance_avx2.cpp must be compiled with -mavx2 -mfma"
#endif

#include <immintrin.h>

#include "kernels.h"
#include "panels.h"
#include "elementwise.h"

namespace sable {
namespace {

alignas(32) const int32_t kTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// Lanes [0, r) set, r in [1, 7].
inline __m256i tail_mask(size_t r) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTailMask + 8 - r)); }

inline float hsum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

inline float cos_finish(float dot, float na, float nb) {
  if (na == 0.0f || nb == 0.0f) return 1.0f;
  return 1.0f - dot / (__builtin_sqrtf(na) * __builtin_sqrtf(nb));
}

// Eight codes widened to float: exactly 8 bytes read.
inline __m256 codes8(const uint8_t* c) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c))));
}

// x = vmin + scale * code for 8 full lanes.
inline __m256 decode8(const uint8_t* c, const float* vmin, const float* scale) {
  return _mm256_fmadd_ps(codes8(c), _mm256_loadu_ps(scale), _mm256_loadu_ps(vmin));
}

// The last r (1..7) lanes: masked float loads, codes copied byte by byte. Masked-off lanes are
// all zero, so they add nothing to any of the sums below.
inline __m256 decode_tail(const uint8_t* c, const float* vmin, const float* scale, __m256i m, size_t r) {
  uint64_t w = 0;
  for (size_t k = 0; k < r; ++k) w |= static_cast<uint64_t>(c[k]) << (8 * k);
  __m256 cf = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(w))));
  return _mm256_fmadd_ps(cf, _mm256_maskload_ps(scale, m), _mm256_maskload_ps(vmin, m));
}

float l2sq_f32(const float* a, const float* b, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    __m256 t0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    __m256 t1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    __m256 t2 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16));
    __m256 t3 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24));
    s0 = _mm256_fmadd_ps(t0, t0, s0);
    s1 = _mm256_fmadd_ps(t1, t1, s1);
    s2 = _mm256_fmadd_ps(t2, t2, s2);
    s3 = _mm256_fmadd_ps(t3, t3, s3);
  }
  if (i + 16 <= d) {
    __m256 t0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    __m256 t1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    s0 = _mm256_fmadd_ps(t0, t0, s0);
    s1 = _mm256_fmadd_ps(t1, t1, s1);
    i += 16;
  }
  if (i + 8 <= d) {
    __m256 t = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    s2 = _mm256_fmadd_ps(t, t, s2);
    i += 8;
  }
  if (i < d) {
    __m256i m = tail_mask(d - i);
    __m256 t = _mm256_sub_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m));
    s3 = _mm256_fmadd_ps(t, t, s3);
  }
  return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

float ip_f32(const float* a, const float* b, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  if (i + 16 <= d) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    i += 16;
  }
  if (i + 8 <= d) {
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s2);
    i += 8;
  }
  if (i < d) {
    __m256i m = tail_mask(d - i);
    s3 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), s3);
  }
  return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

float cos_f32(const float* a, const float* b, size_t d) {
  __m256 dot0 = _mm256_setzero_ps(), dot1 = _mm256_setzero_ps();
  __m256 na0 = _mm256_setzero_ps(), na1 = _mm256_setzero_ps();
  __m256 nb0 = _mm256_setzero_ps(), nb1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    __m256 x0 = _mm256_loadu_ps(a + i), y0 = _mm256_loadu_ps(b + i);
    __m256 x1 = _mm256_loadu_ps(a + i + 8), y1 = _mm256_loadu_ps(b + i + 8);
    dot0 = _mm256_fmadd_ps(x0, y0, dot0);
    na0 = _mm256_fmadd_ps(x0, x0, na0);
    nb0 = _mm256_fmadd_ps(y0, y0, nb0);
    dot1 = _mm256_fmadd_ps(x1, y1, dot1);
    na1 = _mm256_fmadd_ps(x1, x1, na1);
    nb1 = _mm256_fmadd_ps(y1, y1, nb1);
  }
  if (i + 8 <= d) {
    __m256 x = _mm256_loadu_ps(a + i), y = _mm256_loadu_ps(b + i);
    dot0 = _mm256_fmadd_ps(x, y, dot0);
    na0 = _mm256_fmadd_ps(x, x, na0);
    nb0 = _mm256_fmadd_ps(y, y, nb0);
    i += 8;
  }
  if (i < d) {
    __m256i m = tail_mask(d - i);
    __m256 x = _mm256_maskload_ps(a + i, m), y = _mm256_maskload_ps(b + i, m);
    dot1 = _mm256_fmadd_ps(x, y, dot1);
    na1 = _mm256_fmadd_ps(x, x, na1);
    nb1 = _mm256_fmadd_ps(y, y, nb1);
  }
  return cos_finish(hsum(_mm256_add_ps(dot0, dot1)), hsum(_mm256_add_ps(na0, na1)), hsum(_mm256_add_ps(nb0, nb1)));
}

float l2sq_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    __m256 t0 = _mm256_sub_ps(_mm256_loadu_ps(q + i), decode8(code + i, vmin + i, scale + i));
    __m256 t1 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 8), decode8(code + i + 8, vmin + i + 8, scale + i + 8));
    __m256 t2 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 16), decode8(code + i + 16, vmin + i + 16, scale + i + 16));
    __m256 t3 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 24), decode8(code + i + 24, vmin + i + 24, scale + i + 24));
    s0 = _mm256_fmadd_ps(t0, t0, s0);
    s1 = _mm256_fmadd_ps(t1, t1, s1);
    s2 = _mm256_fmadd_ps(t2, t2, s2);
    s3 = _mm256_fmadd_ps(t3, t3, s3);
  }
  if (i + 16 <= d) {
    __m256 t0 = _mm256_sub_ps(_mm256_loadu_ps(q + i), decode8(code + i, vmin + i, scale + i));
    __m256 t1 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 8), decode8(code + i + 8, vmin + i + 8, scale + i + 8));
    s0 = _mm256_fmadd_ps(t0, t0, s0);
    s1 = _mm256_fmadd_ps(t1, t1, s1);
    i += 16;
  }
  if (i + 8 <= d) {
    __m256 t = _mm256_sub_ps(_mm256_loadu_ps(q + i), decode8(code + i, vmin + i, scale + i));
    s2 = _mm256_fmadd_ps(t, t, s2);
    i += 8;
  }
  if (i < d) {
    size_t r = d - i;
    __m256i m = tail_mask(r);
    __m256 t = _mm256_sub_ps(_mm256_maskload_ps(q + i, m), decode_tail(code + i, vmin + i, scale + i, m, r));
    s3 = _mm256_fmadd_ps(t, t, s3);
  }
  return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

float ip_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), decode8(code + i, vmin + i, scale + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), decode8(code + i + 8, vmin + i + 8, scale + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 16), decode8(code + i + 16, vmin + i + 16, scale + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 24), decode8(code + i + 24, vmin + i + 24, scale + i + 24), s3);
  }
  if (i + 16 <= d) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), decode8(code + i, vmin + i, scale + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), decode8(code + i + 8, vmin + i + 8, scale + i + 8), s1);
    i += 16;
  }
  if (i + 8 <= d) {
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), decode8(code + i, vmin + i, scale + i), s2);
    i += 8;
  }
  if (i < d) {
    size_t r = d - i;
    __m256i m = tail_mask(r);
    s3 = _mm256_fmadd_ps(_mm256_maskload_ps(q + i, m), decode_tail(code + i, vmin + i, scale + i, m, r), s3);
  }
  return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

float cos_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  __m256 dot0 = _mm256_setzero_ps(), dot1 = _mm256_setzero_ps();
  __m256 nq0 = _mm256_setzero_ps(), nq1 = _mm256_setzero_ps();
  __m256 nx0 = _mm256_setzero_ps(), nx1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    __m256 y0 = _mm256_loadu_ps(q + i), x0 = decode8(code + i, vmin + i, scale + i);
    __m256 y1 = _mm256_loadu_ps(q + i + 8), x1 = decode8(code + i + 8, vmin + i + 8, scale + i + 8);
    dot0 = _mm256_fmadd_ps(y0, x0, dot0);
    nq0 = _mm256_fmadd_ps(y0, y0, nq0);
    nx0 = _mm256_fmadd_ps(x0, x0, nx0);
    dot1 = _mm256_fmadd_ps(y1, x1, dot1);
    nq1 = _mm256_fmadd_ps(y1, y1, nq1);
    nx1 = _mm256_fmadd_ps(x1, x1, nx1);
  }
  if (i + 8 <= d) {
    __m256 y = _mm256_loadu_ps(q + i), x = decode8(code + i, vmin + i, scale + i);
    dot0 = _mm256_fmadd_ps(y, x, dot0);
    nq0 = _mm256_fmadd_ps(y, y, nq0);
    nx0 = _mm256_fmadd_ps(x, x, nx0);
    i += 8;
  }
  if (i < d) {
    size_t r = d - i;
    __m256i m = tail_mask(r);
    __m256 y = _mm256_maskload_ps(q + i, m), x = decode_tail(code + i, vmin + i, scale + i, m, r);
    dot1 = _mm256_fmadd_ps(y, x, dot1);
    nq1 = _mm256_fmadd_ps(y, y, nq1);
    nx1 = _mm256_fmadd_ps(x, x, nx1);
  }
  return cos_finish(hsum(_mm256_add_ps(dot0, dot1)), hsum(_mm256_add_ps(nq0, nq1)), hsum(_mm256_add_ps(nx0, nx1)));
}

inline __m128 fold256(__m256 a) { return _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)); }

// Four codes a step sharing the weight loads; whole groups of 8 (weights are zero past stride).
void dot_u8_f32_batch(const float* w, const uint8_t* codes, size_t stride, const uint32_t* sel, size_t count,
                      float* out) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const uint8_t* c0 = codes + (sel ? sel[i] : i) * stride;
    const uint8_t* c1 = codes + (sel ? sel[i + 1] : i + 1) * stride;
    const uint8_t* c2 = codes + (sel ? sel[i + 2] : i + 2) * stride;
    const uint8_t* c3 = codes + (sel ? sel[i + 3] : i + 3) * stride;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (size_t t = 0; t < stride; t += 8) {
      const __m256 wv = _mm256_loadu_ps(w + t);
      a0 = _mm256_fmadd_ps(wv, codes8(c0 + t), a0);
      a1 = _mm256_fmadd_ps(wv, codes8(c1 + t), a1);
      a2 = _mm256_fmadd_ps(wv, codes8(c2 + t), a2);
      a3 = _mm256_fmadd_ps(wv, codes8(c3 + t), a3);
    }
    const __m128 s01 = _mm_hadd_ps(fold256(a0), fold256(a1)), s23 = _mm_hadd_ps(fold256(a2), fold256(a3));
    _mm_storeu_ps(out + i, _mm_hadd_ps(s01, s23));
  }
  for (; i < count; ++i) {
    const uint8_t* c = codes + (sel ? sel[i] : i) * stride;
    __m256 a = _mm256_setzero_ps();
    for (size_t t = 0; t < stride; t += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(w + t), codes8(c + t), a);
    const __m128 f = fold256(a);
    const __m128 h = _mm_hadd_ps(f, f);
    out[i] = _mm_cvtss_f32(_mm_hadd_ps(h, h));
  }
}

void argmin_f32_panels(const ArgminPanelsArgs& a, size_t begin, size_t end) { argmin_panels<v8f, 2, 6>(a, begin, end); }
void knn_f32_panels(const KnnPanelsArgs& a, size_t begin, size_t end) { knn_panels<v8f, 2, 6>(a, begin, end); }
void gemm_f32_panels(const GemmPanelsArgs& a, size_t begin, size_t end) { gemm_panels<v8f, 2, 6>(a, begin, end); }
void gelu_f32(float* x, size_t n) { gelu_lanes<v8f>(x, n); }
void softmax_f32(float* x, size_t n) { softmax_lanes<v8f>(x, n); }

// Half rows widened 8 at a time with F16C (vcvtph2ps); the tail converts one by one.
float l2sq_f16(const float* q, const uint16_t* row, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    __m256 t0 = _mm256_sub_ps(_mm256_loadu_ps(q + i), _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))));
    __m256 t1 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 8), _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i + 8))));
    s0 = _mm256_fmadd_ps(t0, t0, s0);
    s1 = _mm256_fmadd_ps(t1, t1, s1);
  }
  if (i + 8 <= d) {
    __m256 t = _mm256_sub_ps(_mm256_loadu_ps(q + i), _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))));
    s0 = _mm256_fmadd_ps(t, t, s0);
    i += 8;
  }
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < d; ++i) {
    const float t = q[i] - _cvtsh_ss(row[i]);
    s += t * t;
  }
  return s;
}

float ip_f16(const float* q, const uint16_t* row, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i + 8))), s1);
  }
  if (i + 8 <= d) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))), s0);
    i += 8;
  }
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < d; ++i) s += q[i] * _cvtsh_ss(row[i]);
  return s;
}

}  // namespace

void bits_dot_u4_batch_popcnt(const uint64_t* planes, size_t words, const uint64_t* codes, const uint32_t* sel,
                              size_t count, uint32_t* out) {
  for (size_t i = 0; i < count; ++i) {
    const uint64_t* c = codes + (sel ? sel[i] : i) * words;
    // Four independent counters: the POPCNTs of one word run in parallel.
    uint64_t n0 = 0, n1 = 0, n2 = 0, n3 = 0;
    for (size_t w = 0; w < words; ++w) {
      const uint64_t x = c[w];
      n0 += uint64_t(_mm_popcnt_u64(x & planes[w]));
      n1 += uint64_t(_mm_popcnt_u64(x & planes[words + w]));
      n2 += uint64_t(_mm_popcnt_u64(x & planes[2 * words + w]));
      n3 += uint64_t(_mm_popcnt_u64(x & planes[3 * words + w]));
    }
    out[i] = uint32_t(n0 + 2 * n1 + 4 * n2 + 8 * n3);
  }
}

namespace {

const KernelTable kTable = {Isa::Avx2,         l2sq_f32,          ip_f32,         cos_f32, l2sq_f16, ip_f16,
                            l2sq_sq8,          ip_sq8,            cos_sq8,        dot_u8_f32_batch,
                            dot_u8_i8x2_batch_reference, false,             16,             argmin_f32_panels,
                            knn_f32_panels,     gemm_f32_panels,    gelu_f32,           softmax_f32,
                            bits_dot_u4_batch_popcnt};

}  // namespace

const KernelTable* kernels_avx2() { return &kTable; }

}  // namespace sable
