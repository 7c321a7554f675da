#include "ops.h"

#include <algorithm>
#include <cmath>

#include "../kernels/kernels.h"

namespace sable {

void layer_norm_rows(float* x, size_t rows, size_t dim, const float* gamma, const float* beta, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    float* v = x + r * dim;
    double sum = 0, sq = 0;
    for (size_t i = 0; i < dim; ++i) sum += v[i];
    const float mean = float(sum / double(dim));
    for (size_t i = 0; i < dim; ++i) {
      const double d = v[i] - mean;
      sq += d * d;
    }
    const float inv = float(1.0 / std::sqrt(sq / double(dim) + double(eps)));
    for (size_t i = 0; i < dim; ++i) v[i] = (v[i] - mean) * inv * gamma[i] + beta[i];
  }
}

void gelu(float* x, size_t n) { active_kernels().gelu_f32(x, n); }

void softmax(float* x, size_t n) { active_kernels().softmax_f32(x, n); }

void normalize_l2(float* v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += double(v[i]) * v[i];
  if (s <= 0) return;
  const float inv = float(1.0 / std::sqrt(s));
  for (size_t i = 0; i < n; ++i) v[i] *= inv;
}

}  // namespace sable
