// AVX-512 VNNI code scoring: the int8 form of the batched dot product (dot_u8_i8x2_batch), u8 x s8
// multiply-adds into int32, 64 per instruction. kernels_avx512vnni() is the AVX-512 table with
// this entry added; dispatch.cpp picks it for Isa::Avx512 when the CPU has AVX512-VNNI.
//
// Everything here has internal linkage and only <immintrin.h> is included, so no out-of-line
// copy of an inline function compiled with AVX-512 can be picked by the linker for baseline code.
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || !defined(__AVX512VNNI__)
#error "distance_avx512vnni.cpp must be compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni"
#endif

#include "avx512_intrinsics.h"

#include "kernels.h"

namespace sable {
namespace {

// One code's int8 dot products over 64-byte chunks [t, end), masked on the last partial chunk;
// folded into the float accumulator every 8 chunks so 128 * hi + lo cannot overflow int32.
inline __m512 vnni_dot(const int8_t* hi, const int8_t* lo, const uint8_t* c, size_t stride) {
  __m512 acc = _mm512_setzero_ps();
  size_t t = 0;
  while (t < stride) {
    __m512i h = _mm512_setzero_si512(), l = _mm512_setzero_si512();
    for (int chunk = 0; chunk < 8 && t < stride; ++chunk, t += 64) {
      const size_t left = stride - t;
      const __m512i x = left >= 64 ? _mm512_loadu_si512(c + t) : _mm512_maskz_loadu_epi8(~0ull >> (64 - left), c + t);
      h = _mm512_dpbusd_epi32(h, x, _mm512_loadu_si512(hi + t));
      l = _mm512_dpbusd_epi32(l, x, _mm512_loadu_si512(lo + t));
    }
    acc = _mm512_add_ps(acc, _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_slli_epi32(h, 7), l)));
  }
  return acc;
}

void dot_u8_i8x2_batch(const int8_t* hi, const int8_t* lo, float s, const uint8_t* codes, size_t stride,
                       const uint32_t* sel, size_t count, float* out) {
  const __m128 sv = _mm_set1_ps(s);
  size_t i = 0;
  if (stride <= 512) {
    // Common case, one int32 accumulation: four codes per step sharing the weight loads.
    const size_t full = stride / 64 * 64;
    const __mmask64 tail = stride > full ? ~0ull >> (64 - (stride - full)) : 0;
    for (; i + 4 <= count; i += 4) {
      const uint8_t* c[4];
      __m512i h[4], l[4];
      for (int b = 0; b < 4; ++b) {
        c[b] = codes + (sel ? sel[i + b] : i + b) * stride;
        h[b] = l[b] = _mm512_setzero_si512();
      }
      size_t t = 0;
      for (; t < full; t += 64) {
        const __m512i wh = _mm512_loadu_si512(hi + t), wl = _mm512_loadu_si512(lo + t);
        for (int b = 0; b < 4; ++b) {
          const __m512i x = _mm512_loadu_si512(c[b] + t);
          h[b] = _mm512_dpbusd_epi32(h[b], x, wh);
          l[b] = _mm512_dpbusd_epi32(l[b], x, wl);
        }
      }
      if (tail) {
        const __m512i wh = _mm512_loadu_si512(hi + t), wl = _mm512_loadu_si512(lo + t);
        for (int b = 0; b < 4; ++b) {
          const __m512i x = _mm512_maskz_loadu_epi8(tail, c[b] + t);
          h[b] = _mm512_dpbusd_epi32(h[b], x, wh);
          l[b] = _mm512_dpbusd_epi32(l[b], x, wl);
        }
      }
      __m128i f[4];
      for (int b = 0; b < 4; ++b) {
        const __m512i v = _mm512_add_epi32(_mm512_slli_epi32(h[b], 7), l[b]);
        const __m256i y = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
        f[b] = _mm_add_epi32(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
      }
      const __m128i sum = _mm_hadd_epi32(_mm_hadd_epi32(f[0], f[1]), _mm_hadd_epi32(f[2], f[3]));
      _mm_storeu_ps(out + i, _mm_mul_ps(_mm_cvtepi32_ps(sum), sv));
    }
  }
  for (; i < count; ++i) out[i] = s * _mm512_reduce_add_ps(vnni_dot(hi, lo, codes + (sel ? sel[i] : i) * stride, stride));
}

KernelTable make_table() {
  KernelTable t = *kernels_avx512();
  t.dot_u8_i8x2_batch = dot_u8_i8x2_batch;
  t.prefer_i8x2 = true;
  return t;
}

}  // namespace

const KernelTable* kernels_avx512vnni() {
  static const KernelTable table = make_table();
  return &table;
}

}  // namespace sable
