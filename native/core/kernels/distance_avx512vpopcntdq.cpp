// AVX-512 VPOPCNTDQ bit-code scoring (bits_dot_u4_batch): eight 64-bit population counts per
// instruction, a 512-bit code in one register. dispatch.cpp puts it into the AVX-512 table it
// picks when the CPU has AVX512-VPOPCNTDQ.
//
// Everything here has internal linkage but the one entry point, and only <immintrin.h> is
// included, so no out-of-line copy of an inline function compiled with AVX-512 can be picked by
// the linker for baseline code.
#if !defined(__AVX512F__) || !defined(__AVX512VPOPCNTDQ__)
#error "distance_avx512vpopcntdq.cpp must be compiled with -mavx512f -mavx512vpopcntdq"
#endif

#include "avx512_intrinsics.h"

#include "kernels.h"

namespace sable {

namespace {

// sum over k of popcount(c & p_k) << k, lane by lane.
inline __m512i weighted_counts(__m512i c, __m512i p0, __m512i p1, __m512i p2, __m512i p3) {
  const __m512i n0 = _mm512_popcnt_epi64(_mm512_and_si512(c, p0));
  const __m512i n1 = _mm512_popcnt_epi64(_mm512_and_si512(c, p1));
  const __m512i n2 = _mm512_popcnt_epi64(_mm512_and_si512(c, p2));
  const __m512i n3 = _mm512_popcnt_epi64(_mm512_and_si512(c, p3));
  return _mm512_add_epi64(_mm512_add_epi64(n0, _mm512_slli_epi64(n1, 1)),
                          _mm512_add_epi64(_mm512_slli_epi64(n2, 2), _mm512_slli_epi64(n3, 3)));
}

}  // namespace

void bits_dot_u4_batch_avx512vpopcntdq(const uint64_t* planes, size_t words, const uint64_t* codes,
                                       const uint32_t* sel, size_t count, uint32_t* out) {
  if (words <= 8) {
    // One register a code; the planes stay in registers for the whole batch.
    const __mmask8 m = __mmask8(0xff >> (8 - words));
    const __m512i p0 = _mm512_maskz_loadu_epi64(m, planes), p1 = _mm512_maskz_loadu_epi64(m, planes + words);
    const __m512i p2 = _mm512_maskz_loadu_epi64(m, planes + 2 * words), p3 = _mm512_maskz_loadu_epi64(m, planes + 3 * words);
    auto counts = [&](size_t i) {
      return weighted_counts(_mm512_maskz_loadu_epi64(m, codes + (sel ? sel[i] : i) * words), p0, p1, p2, p3);
    };
    size_t i = 0;
    // Eight codes at a time: their eight lane vectors summed in a transpose (pairs within 128-bit
    // lanes, then across lanes), one vector of eight totals instead of eight horizontal sums.
    for (; i + 8 <= count; i += 8) {
      __m512i a[4];
      for (int j = 0; j < 4; ++j) {
        const __m512i x = counts(i + 2 * j), y = counts(i + 2 * j + 1);
        a[j] = _mm512_add_epi64(_mm512_unpacklo_epi64(x, y), _mm512_unpackhi_epi64(x, y));
      }
      auto fold = [](__m512i x, __m512i y) {
        return _mm512_add_epi64(_mm512_shuffle_i64x2(x, y, _MM_SHUFFLE(2, 0, 2, 0)),
                                _mm512_shuffle_i64x2(x, y, _MM_SHUFFLE(3, 1, 3, 1)));
      };
      const __m512i total = fold(fold(a[0], a[1]), fold(a[2], a[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi64_epi32(total));
    }
    for (; i < count; ++i) out[i] = uint32_t(_mm512_reduce_add_epi64(counts(i)));
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint64_t* c = codes + (sel ? sel[i] : i) * words;
    __m512i acc = _mm512_setzero_si512();
    for (size_t w = 0; w < words; w += 8) {
      const __mmask8 m = words - w >= 8 ? __mmask8(0xff) : __mmask8(0xff >> (8 - (words - w)));
      acc = _mm512_add_epi64(acc, weighted_counts(_mm512_maskz_loadu_epi64(m, c + w), _mm512_maskz_loadu_epi64(m, planes + w),
                                                  _mm512_maskz_loadu_epi64(m, planes + words + w),
                                                  _mm512_maskz_loadu_epi64(m, planes + 2 * words + w),
                                                  _mm512_maskz_loadu_epi64(m, planes + 3 * words + w)));
    }
    out[i] = uint32_t(_mm512_reduce_add_epi64(acc));
  }
}

}  // namespace sable
