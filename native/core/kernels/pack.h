// Packing rows into the panels of the panel kernels (panels.h): shared by k-means (centroid and
// query panels) and the model's linear layers (weight panels).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sable {

// Rows [0, n) of m (n x k, row-major) in panels of `width` rows, transposed and zero padded:
// panel[p][t * width + lane] = m[p * width + lane][t].
std::vector<float> pack_panels(const float* m, size_t n, size_t k, size_t width);

// The same rows rounded to bfloat16, in the pairs layout of GemmBf16PanelsArgs:
// panel[p][t * width + lane] = bf16(m[r][2t]) | bf16(m[r][2t + 1]) << 16, r = p * width + lane.
std::vector<uint32_t> pack_bf16_panels(const float* m, size_t n, size_t k, size_t width);

}  // namespace sable
