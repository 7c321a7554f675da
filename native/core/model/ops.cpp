#include "ops.h"

#include <algorithm>
#include <cmath>

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

namespace {

// erf by Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7.
inline float erf_approx(float x) {
  const float ax = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * ax);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float y = 1.0f - poly * std::exp(-ax * ax);
  return x < 0 ? -y : y;
}

}  // namespace

void gelu(float* x, size_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + erf_approx(x[i] * kInvSqrt2));
}

void softmax(float* x, size_t n) {
  if (n == 0) return;
  const float m = *std::max_element(x, x + n);
  float sum = 0;
  for (size_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - m));
  const float inv = 1.0f / sum;
  for (size_t i = 0; i < n; ++i) x[i] *= inv;
}

void normalize_l2(float* v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += double(v[i]) * v[i];
  if (s <= 0) return;
  const float inv = float(1.0 / std::sqrt(s));
  for (size_t i = 0; i < n; ++i) v[i] *= inv;
}

}  // namespace sable
