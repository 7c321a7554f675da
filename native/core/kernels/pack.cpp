#include "pack.h"

#include "kernels.h"

namespace sable {

std::vector<float> pack_panels(const float* m, size_t n, size_t k, size_t width) {
  const size_t npanels = (n + width - 1) / width;
  std::vector<float> panels(npanels * k * width, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    float* col = panels.data() + (i / width) * k * width + i % width;
    for (size_t t = 0; t < k; ++t) col[t * width] = m[i * k + t];
  }
  return panels;
}

std::vector<uint32_t> pack_bf16_panels(const float* m, size_t n, size_t k, size_t width) {
  const size_t npanels = (n + width - 1) / width, k2 = (k + 1) / 2;
  std::vector<uint32_t> panels(npanels * k2 * width, 0u);
  for (size_t i = 0; i < n; ++i) {
    uint32_t* col = panels.data() + (i / width) * k2 * width + i % width;
    const float* row = m + i * k;
    for (size_t t = 0; t < k2; ++t) {
      const uint32_t lo = bf16_of(row[2 * t]), hi = 2 * t + 1 < k ? bf16_of(row[2 * t + 1]) : 0u;
      col[t * width] = lo | hi << 16;
    }
  }
  return panels;
}

}  // namespace sable
