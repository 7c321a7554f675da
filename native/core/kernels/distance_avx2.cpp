// AVX2 + FMA kernels: the bodies of distance_bodies.h over 8-float lanes, with a masked tail
// (vmaskmovps) so no element past d is ever read, for any d including d < 8; half rows widened
// with F16C (vcvtph2ps), their tail converted one by one (AVX2 has no masked 16-bit load).
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
#include "distance_bodies.h"

namespace sable {
namespace {

alignas(32) const int32_t kTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

inline __m128 fold256(__m256 a) { return _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)); }

struct Avx2Lanes {
  using V = __m256;
  static constexpr size_t L = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }

  // The tail is its length r in [1, 7]: the codes' tail copies r bytes, the float loads mask
  // lanes [0, r).
  using Tail = size_t;
  static Tail tail(size_t r) { return r; }
  static V load_tail(const float* p, Tail r) {
    return _mm256_maskload_ps(p, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTailMask + 8 - r)));
  }

  // Eight codes widened to float: exactly 8 bytes read.
  static V codes(const uint8_t* c) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c))));
  }
  // The last r codes copied byte by byte; the lanes past them are zero.
  static V codes_tail(const uint8_t* c, Tail r) {
    uint64_t w = 0;
    for (size_t k = 0; k < r; ++k) w |= static_cast<uint64_t>(c[k]) << (8 * k);
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(w))));
  }

  static float reduce(V v) {
    __m128 x = fold256(v);
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
  }

  static V half(const uint16_t* row) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row))); }
  static constexpr bool kHalfTailMasked = false;
  static float half1(uint16_t h) { return _cvtsh_ss(h); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void store_half(uint16_t* p, V v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }

  // Four horizontal sums at once: fold each accumulator to 128 bits, then transpose-add. A
  // remainder code sums in the same order, so it scores as it would in a group of four.
  static void batch_sum4(float* out, V a0, V a1, V a2, V a3) {
    const __m128 s01 = _mm_hadd_ps(fold256(a0), fold256(a1)), s23 = _mm_hadd_ps(fold256(a2), fold256(a3));
    _mm_storeu_ps(out, _mm_hadd_ps(s01, s23));
  }
  static float batch_sum1(V a) {
    const __m128 f = fold256(a);
    const __m128 h = _mm_hadd_ps(f, f);
    return _mm_cvtss_f32(_mm_hadd_ps(h, h));
  }
};

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

constexpr KernelTable kTable = {
    .isa = Isa::Avx2,
    .l2sq_f32 = l2sq_f32<Avx2Lanes>,
    .ip_f32 = ip_f32<Avx2Lanes>,
    .cos_f32 = cos_f32<Avx2Lanes>,
    .l2sq_f16 = l2sq_f16<Avx2Lanes>,
    .ip_f16 = ip_f16<Avx2Lanes>,
    .l2sq_sq8 = l2sq_sq8<Avx2Lanes>,
    .ip_sq8 = ip_sq8<Avx2Lanes>,
    .cos_sq8 = cos_sq8<Avx2Lanes>,
    .dot_u8_f32_batch = dot_u8_f32_batch<Avx2Lanes>,
    .dot_u8_i8x2_batch = dot_u8_i8x2_batch_reference,
    .prefer_i8x2 = false,
    .panel_width = 16,
    .argmin_f32_panels = argmin_panels<v8f, 2, 6>,
    .knn_f32_panels = knn_panels<v8f, 2, 6>,
    .gemm_f32_panels = gemm_panels<v8f, 2, 6>,
    .gelu_f32 = gelu_lanes<v8f>,
    .softmax_f32 = softmax_lanes<v8f>,
    .bits_dot_u4_batch = bits_dot_u4_batch_popcnt,
    .gemm_bf16_panels = nullptr,
    .narrow_panel_width = 8,
    .knn_f32_panels_narrow = knn_panels<v8f, 1, 12>,
    .f32_to_f16 = f32_to_f16<Avx2Lanes>,
    .f16_to_f32 = f16_to_f32<Avx2Lanes>,
};

}  // namespace

const KernelTable* kernels_avx2() { return &kTable; }

}  // namespace sable
