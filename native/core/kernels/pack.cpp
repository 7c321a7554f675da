#include "pack.h"

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

}  // namespace sable
