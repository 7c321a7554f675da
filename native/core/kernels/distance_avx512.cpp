// AVX-512 kernels (F/BW/VL/DQ): the bodies of distance_bodies.h over 16-float lanes. The tail is
// a single masked step (_mm512_maskz_loadu_ps, _mm_maskz_loadu_epi8 for codes,
// _mm256_maskz_loadu_epi16 for half rows), so there is no scalar tail and no element past d is
// ever read.
//
// Everything here has internal linkage and only <immintrin.h> is included, so no out-of-line
// copy of an inline function compiled with AVX-512 can be picked by the linker for baseline code.
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || !defined(__FMA__)
#error "distance_avx512.cpp must be compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma"
#endif

#include "avx512_intrinsics.h"

#include "kernels.h"
#include "panels.h"
#include "elementwise.h"
#include "distance_bodies.h"

namespace sable {
namespace {

inline __m128 fold512(__m512 a) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

struct Avx512Lanes {
  using V = __m512;
  static constexpr size_t L = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }

  // Lanes [0, r) set, r in [1, 15].
  using Tail = __mmask16;
  static Tail tail(size_t r) { return static_cast<__mmask16>((1u << r) - 1u); }
  static V load_tail(const float* p, Tail m) { return _mm512_maskz_loadu_ps(m, p); }

  // 16 codes widened to float: exactly 16 bytes read.
  static V codes(const uint8_t* c) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c))));
  }
  static V codes_tail(const uint8_t* c, Tail m) { return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, c))); }

  static float reduce(V v) { return _mm512_reduce_add_ps(v); }

  static V half(const uint16_t* row) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row))); }
  static constexpr bool kHalfTailMasked = true;
  static V half_tail(const uint16_t* row, Tail m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row)); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void store_half(uint16_t* p, V v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }

  // Four horizontal sums at once: fold each accumulator to 128 bits, then transpose-add.
  static void batch_sum4(float* out, V a0, V a1, V a2, V a3) {
    const __m128 s01 = _mm_hadd_ps(fold512(a0), fold512(a1)), s23 = _mm_hadd_ps(fold512(a2), fold512(a3));
    _mm_storeu_ps(out, _mm_hadd_ps(s01, s23));
  }
  static float batch_sum1(V a) { return _mm512_reduce_add_ps(a); }
};

constexpr KernelTable kTable = {
    .isa = Isa::Avx512,
    .l2sq_f32 = l2sq_f32<Avx512Lanes>,
    .ip_f32 = ip_f32<Avx512Lanes>,
    .cos_f32 = cos_f32<Avx512Lanes>,
    .l2sq_f16 = l2sq_f16<Avx512Lanes>,
    .ip_f16 = ip_f16<Avx512Lanes>,
    .l2sq_sq8 = l2sq_sq8<Avx512Lanes>,
    .ip_sq8 = ip_sq8<Avx512Lanes>,
    .cos_sq8 = cos_sq8<Avx512Lanes>,
    .dot_u8_f32_batch = dot_u8_f32_batch<Avx512Lanes>,
    .dot_u8_i8x2_batch = dot_u8_i8x2_batch_reference,
    .prefer_i8x2 = false,
    .panel_width = 32,
    .argmin_f32_panels = argmin_panels<v16f, 2, 6>,
    .knn_f32_panels = knn_panels<v16f, 2, 6>,
    .gemm_f32_panels = gemm_panels<v16f, 2, 6>,
    .gelu_f32 = gelu_lanes<v16f>,
    .softmax_f32 = softmax_lanes<v16f>,
    .bits_dot_u4_batch = bits_dot_u4_batch_popcnt,
    .gemm_bf16_panels = nullptr,
    .narrow_panel_width = 16,
    .knn_f32_panels_narrow = knn_panels<v16f, 1, 12>,
    .f32_to_f16 = f32_to_f16<Avx512Lanes>,
    .f16_to_f32 = f16_to_f32<Avx512Lanes>,
};

}  // namespace

const KernelTable* kernels_avx512() { return &kTable; }

}  // namespace sable
