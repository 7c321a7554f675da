// AVX-512 kernels (F/BW/VL/DQ): 16 floats a step, four independent accumulators in the main loop
// (64 floats an iteration), one horizontal sum at the end. The tail is a single masked step
// (_mm512_maskz_loadu_ps, and _mm_maskz_loadu_epi8 for codes), so there is no scalar tail and no
// element past d is ever read. Masked-off lanes load as zero and add nothing to any sum.
//
// Everything here has internal linkage and only <immintrin.h> is included, so no out-of-line
// copy of an inline function compiled with AVX-512 can be picked by the linker for baseline code.
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || !defined(__FMA__)
#error "distance_avx512.cpp must be compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma"
#endif

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own _mm512_undefined_*()
// undefined-value intrinsics (GCC PR 105593); silence that false positive for the intrinsics only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "kernels.h"
#include "panels.h"
#include "elementwise.h"

namespace sable {
namespace {

// Lanes [0, r) set, r in [1, 15].
inline __mmask16 tail_mask(size_t r) { return static_cast<__mmask16>((1u << r) - 1u); }

inline float cos_finish(float dot, float na, float nb) {
  if (na == 0.0f || nb == 0.0f) return 1.0f;
  return 1.0f - dot / (__builtin_sqrtf(na) * __builtin_sqrtf(nb));
}

// x = vmin + scale * code for 16 full lanes (exactly 16 code bytes read).
inline __m512 decode16(const uint8_t* c, const float* vmin, const float* scale) {
  __m512 cf = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c))));
  return _mm512_fmadd_ps(cf, _mm512_loadu_ps(scale), _mm512_loadu_ps(vmin));
}

inline __m512 decode16_masked(const uint8_t* c, const float* vmin, const float* scale, __mmask16 m) {
  __m512 cf = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, c)));
  return _mm512_fmadd_ps(cf, _mm512_maskz_loadu_ps(m, scale), _mm512_maskz_loadu_ps(m, vmin));
}

float l2sq_f32(const float* a, const float* b, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= d; i += 64) {
    __m512 t0 = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    __m512 t1 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));
    __m512 t2 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32));
    __m512 t3 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48));
    s0 = _mm512_fmadd_ps(t0, t0, s0);
    s1 = _mm512_fmadd_ps(t1, t1, s1);
    s2 = _mm512_fmadd_ps(t2, t2, s2);
    s3 = _mm512_fmadd_ps(t3, t3, s3);
  }
  if (i + 32 <= d) {
    __m512 t0 = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    __m512 t1 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));
    s0 = _mm512_fmadd_ps(t0, t0, s0);
    s1 = _mm512_fmadd_ps(t1, t1, s1);
    i += 32;
  }
  if (i + 16 <= d) {
    __m512 t = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    s2 = _mm512_fmadd_ps(t, t, s2);
    i += 16;
  }
  if (i < d) {
    __mmask16 m = tail_mask(d - i);
    __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));
    s3 = _mm512_fmadd_ps(t, t, s3);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

float ip_f32(const float* a, const float* b, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= d; i += 64) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
    s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
  }
  if (i + 32 <= d) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    i += 32;
  }
  if (i + 16 <= d) {
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s2);
    i += 16;
  }
  if (i < d) {
    __mmask16 m = tail_mask(d - i);
    s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s3);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

float cos_f32(const float* a, const float* b, size_t d) {
  __m512 dot0 = _mm512_setzero_ps(), dot1 = _mm512_setzero_ps();
  __m512 na0 = _mm512_setzero_ps(), na1 = _mm512_setzero_ps();
  __m512 nb0 = _mm512_setzero_ps(), nb1 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    __m512 x0 = _mm512_loadu_ps(a + i), y0 = _mm512_loadu_ps(b + i);
    __m512 x1 = _mm512_loadu_ps(a + i + 16), y1 = _mm512_loadu_ps(b + i + 16);
    dot0 = _mm512_fmadd_ps(x0, y0, dot0);
    na0 = _mm512_fmadd_ps(x0, x0, na0);
    nb0 = _mm512_fmadd_ps(y0, y0, nb0);
    dot1 = _mm512_fmadd_ps(x1, y1, dot1);
    na1 = _mm512_fmadd_ps(x1, x1, na1);
    nb1 = _mm512_fmadd_ps(y1, y1, nb1);
  }
  if (i + 16 <= d) {
    __m512 x = _mm512_loadu_ps(a + i), y = _mm512_loadu_ps(b + i);
    dot0 = _mm512_fmadd_ps(x, y, dot0);
    na0 = _mm512_fmadd_ps(x, x, na0);
    nb0 = _mm512_fmadd_ps(y, y, nb0);
    i += 16;
  }
  if (i < d) {
    __mmask16 m = tail_mask(d - i);
    __m512 x = _mm512_maskz_loadu_ps(m, a + i), y = _mm512_maskz_loadu_ps(m, b + i);
    dot1 = _mm512_fmadd_ps(x, y, dot1);
    na1 = _mm512_fmadd_ps(x, x, na1);
    nb1 = _mm512_fmadd_ps(y, y, nb1);
  }
  return cos_finish(_mm512_reduce_add_ps(_mm512_add_ps(dot0, dot1)), _mm512_reduce_add_ps(_mm512_add_ps(na0, na1)),
                    _mm512_reduce_add_ps(_mm512_add_ps(nb0, nb1)));
}

float l2sq_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= d; i += 64) {
    __m512 t0 = _mm512_sub_ps(_mm512_loadu_ps(q + i), decode16(code + i, vmin + i, scale + i));
    __m512 t1 = _mm512_sub_ps(_mm512_loadu_ps(q + i + 16), decode16(code + i + 16, vmin + i + 16, scale + i + 16));
    __m512 t2 = _mm512_sub_ps(_mm512_loadu_ps(q + i + 32), decode16(code + i + 32, vmin + i + 32, scale + i + 32));
    __m512 t3 = _mm512_sub_ps(_mm512_loadu_ps(q + i + 48), decode16(code + i + 48, vmin + i + 48, scale + i + 48));
    s0 = _mm512_fmadd_ps(t0, t0, s0);
    s1 = _mm512_fmadd_ps(t1, t1, s1);
    s2 = _mm512_fmadd_ps(t2, t2, s2);
    s3 = _mm512_fmadd_ps(t3, t3, s3);
  }
  if (i + 32 <= d) {
    __m512 t0 = _mm512_sub_ps(_mm512_loadu_ps(q + i), decode16(code + i, vmin + i, scale + i));
    __m512 t1 = _mm512_sub_ps(_mm512_loadu_ps(q + i + 16), decode16(code + i + 16, vmin + i + 16, scale + i + 16));
    s0 = _mm512_fmadd_ps(t0, t0, s0);
    s1 = _mm512_fmadd_ps(t1, t1, s1);
    i += 32;
  }
  if (i + 16 <= d) {
    __m512 t = _mm512_sub_ps(_mm512_loadu_ps(q + i), decode16(code + i, vmin + i, scale + i));
    s2 = _mm512_fmadd_ps(t, t, s2);
    i += 16;
  }
  if (i < d) {
    __mmask16 m = tail_mask(d - i);
    __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, q + i), decode16_masked(code + i, vmin + i, scale + i, m));
    s3 = _mm512_fmadd_ps(t, t, s3);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

float ip_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= d; i += 64) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), decode16(code + i, vmin + i, scale + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 16), decode16(code + i + 16, vmin + i + 16, scale + i + 16), s1);
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 32), decode16(code + i + 32, vmin + i + 32, scale + i + 32), s2);
    s3 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 48), decode16(code + i + 48, vmin + i + 48, scale + i + 48), s3);
  }
  if (i + 32 <= d) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), decode16(code + i, vmin + i, scale + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 16), decode16(code + i + 16, vmin + i + 16, scale + i + 16), s1);
    i += 32;
  }
  if (i + 16 <= d) {
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), decode16(code + i, vmin + i, scale + i), s2);
    i += 16;
  }
  if (i < d) {
    __mmask16 m = tail_mask(d - i);
    s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + i), decode16_masked(code + i, vmin + i, scale + i, m), s3);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

float cos_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  __m512 dot0 = _mm512_setzero_ps(), dot1 = _mm512_setzero_ps();
  __m512 nq0 = _mm512_setzero_ps(), nq1 = _mm512_setzero_ps();
  __m512 nx0 = _mm512_setzero_ps(), nx1 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    __m512 y0 = _mm512_loadu_ps(q + i), x0 = decode16(code + i, vmin + i, scale + i);
    __m512 y1 = _mm512_loadu_ps(q + i + 16), x1 = decode16(code + i + 16, vmin + i + 16, scale + i + 16);
    dot0 = _mm512_fmadd_ps(y0, x0, dot0);
    nq0 = _mm512_fmadd_ps(y0, y0, nq0);
    nx0 = _mm512_fmadd_ps(x0, x0, nx0);
    dot1 = _mm512_fmadd_ps(y1, x1, dot1);
    nq1 = _mm512_fmadd_ps(y1, y1, nq1);
    nx1 = _mm512_fmadd_ps(x1, x1, nx1);
  }
  if (i + 16 <= d) {
    __m512 y = _mm512_loadu_ps(q + i), x = decode16(code + i, vmin + i, scale + i);
    dot0 = _mm512_fmadd_ps(y, x, dot0);
    nq0 = _mm512_fmadd_ps(y, y, nq0);
    nx0 = _mm512_fmadd_ps(x, x, nx0);
    i += 16;
  }
  if (i < d) {
    __mmask16 m = tail_mask(d - i);
    __m512 y = _mm512_maskz_loadu_ps(m, q + i), x = decode16_masked(code + i, vmin + i, scale + i, m);
    dot1 = _mm512_fmadd_ps(y, x, dot1);
    nq1 = _mm512_fmadd_ps(y, y, nq1);
    nx1 = _mm512_fmadd_ps(x, x, nx1);
  }
  return cos_finish(_mm512_reduce_add_ps(_mm512_add_ps(dot0, dot1)), _mm512_reduce_add_ps(_mm512_add_ps(nq0, nq1)),
                    _mm512_reduce_add_ps(_mm512_add_ps(nx0, nx1)));
}

inline __m512 u8x16_to_ps(const uint8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

inline __m128 fold512(__m512 a) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// Four codes a step sharing the weight loads; whole groups of 16 (weights are zero past stride).
void dot_u8_f32_batch(const float* w, const uint8_t* codes, size_t stride, const uint32_t* sel, size_t count,
                      float* out) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const uint8_t* c0 = codes + (sel ? sel[i] : i) * stride;
    const uint8_t* c1 = codes + (sel ? sel[i + 1] : i + 1) * stride;
    const uint8_t* c2 = codes + (sel ? sel[i + 2] : i + 2) * stride;
    const uint8_t* c3 = codes + (sel ? sel[i + 3] : i + 3) * stride;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    for (size_t t = 0; t < stride; t += 16) {
      const __m512 wv = _mm512_loadu_ps(w + t);
      a0 = _mm512_fmadd_ps(wv, u8x16_to_ps(c0 + t), a0);
      a1 = _mm512_fmadd_ps(wv, u8x16_to_ps(c1 + t), a1);
      a2 = _mm512_fmadd_ps(wv, u8x16_to_ps(c2 + t), a2);
      a3 = _mm512_fmadd_ps(wv, u8x16_to_ps(c3 + t), a3);
    }
    // Four horizontal sums at once: fold each accumulator to 128 bits, then transpose-add.
    const __m128 s01 = _mm_hadd_ps(fold512(a0), fold512(a1)), s23 = _mm_hadd_ps(fold512(a2), fold512(a3));
    _mm_storeu_ps(out + i, _mm_hadd_ps(s01, s23));
  }
  for (; i < count; ++i) {
    const uint8_t* c = codes + (sel ? sel[i] : i) * stride;
    __m512 a = _mm512_setzero_ps();
    for (size_t t = 0; t < stride; t += 16) a = _mm512_fmadd_ps(_mm512_loadu_ps(w + t), u8x16_to_ps(c + t), a);
    out[i] = _mm512_reduce_add_ps(a);
  }
}

void argmin_f32_panels(const ArgminPanelsArgs& a, size_t begin, size_t end) { argmin_panels<v16f, 2, 6>(a, begin, end); }
void knn_f32_panels(const KnnPanelsArgs& a, size_t begin, size_t end) { knn_panels<v16f, 2, 6>(a, begin, end); }
void gemm_f32_panels(const GemmPanelsArgs& a, size_t begin, size_t end) { gemm_panels<v16f, 2, 6>(a, begin, end); }
void gelu_f32(float* x, size_t n) { gelu_lanes<v16f>(x, n); }
void softmax_f32(float* x, size_t n) { softmax_lanes<v16f>(x, n); }

// Half rows widened 16 at a time (vcvtph2ps); the tail is one masked step.
float l2sq_f16(const float* q, const uint16_t* row, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    __m512 t0 = _mm512_sub_ps(_mm512_loadu_ps(q + i), _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i))));
    __m512 t1 = _mm512_sub_ps(_mm512_loadu_ps(q + i + 16), _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i + 16))));
    s0 = _mm512_fmadd_ps(t0, t0, s0);
    s1 = _mm512_fmadd_ps(t1, t1, s1);
  }
  for (; i < d; i += 16) {
    const __mmask16 m = d - i >= 16 ? __mmask16(0xffff) : tail_mask(d - i);
    __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, q + i), _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + i)));
    s0 = _mm512_fmadd_ps(t, t, s0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

float ip_f16(const float* q, const uint16_t* row, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i))), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 16), _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i + 16))), s1);
  }
  for (; i < d; i += 16) {
    const __mmask16 m = d - i >= 16 ? __mmask16(0xffff) : tail_mask(d - i);
    s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + i), _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + i)), s0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

const KernelTable kTable = {Isa::Avx512,       l2sq_f32,          ip_f32,         cos_f32, l2sq_f16, ip_f16,
                            l2sq_sq8,          ip_sq8,            cos_sq8,        dot_u8_f32_batch,
                            dot_u8_i8x2_batch_reference, false,             32,             argmin_f32_panels,
                            knn_f32_panels,     gemm_f32_panels,    gelu_f32,           softmax_f32,
                            bits_dot_u4_batch_popcnt};

}  // namespace

const KernelTable* kernels_avx512() { return &kTable; }

}  // namespace sable
