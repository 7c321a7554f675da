// The bfloat16 matrix-product tile as a plain loop (baseline flags): what the AVX512-BF16 variant
// is checked against. Each pair is summed as the instruction does, a[2t] b[2t] + a[2t+1] b[2t+1]
// added to the running float sum, so the two differ only by float rounding inside a pair.
#include <cstring>

#include "kernels.h"

namespace sable {

namespace {

float float_of(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

void gemm_bf16_panels_reference(const GemmBf16PanelsArgs& j, size_t begin, size_t end) {
  // The reference tile reads any width: it is told none, so it takes the AVX-512 one (32).
  constexpr size_t W = 32;
  for (size_t i = begin; i < end; ++i) {
    const uint16_t* row = j.a + i * 2 * j.k2;
    for (size_t col = 0; col < j.n; ++col) {
      const uint32_t* panel = j.panels + (col / W) * j.k2 * W + col % W;
      float sum = j.bias[col];
      for (size_t t = 0; t < j.k2; ++t) {
        const uint32_t b = panel[t * W];
        sum += float_of(row[2 * t]) * float_of(uint16_t(b)) + float_of(row[2 * t + 1]) * float_of(uint16_t(b >> 16));
      }
      j.c[i * j.ldc + col] = sum;
    }
  }
}

}  // namespace sable
