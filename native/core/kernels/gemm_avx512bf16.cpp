// The bfloat16 matrix-product tile on AVX512-BF16 (compiled with -mavx512bf16; chosen at load by
// dispatch.cpp only where the CPU has the extension). VDPBF16PS multiplies 32 pairs of bfloat16
// and adds each pair's sum into 16 float lanes: twice the products of a float FMA per
// instruction, from weights half the size, which is what bounds one short query (the model's
// weights are read once per call).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels.h"

namespace sable {

namespace {

constexpr size_t kW = 32;  // two registers of 16 float lanes
constexpr int kR = 8;      // rows per register tile: 16 accumulators

template <int R>
inline __attribute__((always_inline)) void tile(const GemmBf16PanelsArgs& j, const uint32_t* panel, const float* bias,
                                               size_t i0, size_t rows, size_t p) {
  const uint32_t* xr[R];
  for (int r = 0; r < R; ++r) xr[r] = reinterpret_cast<const uint32_t*>(j.a + (i0 + std::min<size_t>(r, rows - 1)) * 2 * j.k2);
  __m512 acc[R][2];
  const __m512 b0 = _mm512_loadu_ps(bias), b1 = _mm512_loadu_ps(bias + 16);
  for (int r = 0; r < R; ++r) acc[r][0] = b0, acc[r][1] = b1;
  for (size_t t = 0; t < j.k2; ++t) {
    const __m512bh w0 = (__m512bh)_mm512_loadu_si512(panel + t * kW);
    const __m512bh w1 = (__m512bh)_mm512_loadu_si512(panel + t * kW + 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      uint32_t pair;
      std::memcpy(&pair, xr[r] + t, 4);
      const __m512bh x = (__m512bh)_mm512_set1_epi32(int(pair));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, w0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, w1);
    }
  }
  const size_t cols = std::min(kW, j.n - p * kW);
  const __mmask16 m0 = cols >= 16 ? 0xffff : __mmask16((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? 0xffff : cols <= 16 ? 0 : __mmask16((1u << (cols - 16)) - 1);
  for (int r = 0; r < R && size_t(r) < rows; ++r) {
    float* out = j.c + (i0 + r) * j.ldc + p * kW;
    _mm512_mask_storeu_ps(out, m0, acc[r][0]);
    _mm512_mask_storeu_ps(out + 16, m1, acc[r][1]);
  }
}

}  // namespace

void gemm_bf16_panels_avx512bf16(const GemmBf16PanelsArgs& j, size_t begin, size_t end) {
  // Rows in chunks, each chunk swept across every panel: a panel (k2 x 32 pairs, 96 KB for the
  // FFN's 1536 inputs) stays in L2 while the chunk's rows pass over it.
  constexpr size_t kRowChunk = 8 * kR;
  const size_t npanels = (j.n + kW - 1) / kW;
  for (size_t c0 = begin; c0 < end; c0 += kRowChunk) {
    const size_t c1 = std::min(end, c0 + kRowChunk);
    for (size_t p = 0; p < npanels; ++p) {
      const uint32_t* panel = j.panels + p * j.k2 * kW;
      for (size_t i0 = c0; i0 < c1; i0 += kR) {
        const size_t rows = std::min<size_t>(kR, c1 - i0);
        // Short queries have few rows: a narrower tile spends no work on repeated rows.
        if (rows <= 2) tile<2>(j, panel, j.bias + p * kW, i0, rows, p);
        else if (rows <= 4) tile<4>(j, panel, j.bias + p * kW, i0, rows, p);
        else tile<kR>(j, panel, j.bias + p * kW, i0, rows, p);
      }
    }
  }
}

}  // namespace sable
