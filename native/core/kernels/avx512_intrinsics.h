// <immintrin.h> for the AVX-512 files (distance_avx512*.cpp). GCC 12's AVX-512 headers trip
// -W(maybe-)uninitialized on their own _mm512_undefined_*() undefined-value intrinsics (GCC PR
// 105593); the false positive is silenced for the intrinsics only.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
