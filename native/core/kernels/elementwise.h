// Element-wise kernels (KernelTable::gelu_f32, softmax_f32), written once with GNU C vector extensions and
// instantiated by each distance_<isa>.cpp with its own vector type, like panels.h (internal
// linkage for the same reason). Include after panels.h, which defines the vector types.
#pragma once
#include <cstring>

#include "kernels.h"

namespace sable {
namespace {

// erf as a rational function of x (odd over even polynomial in x^2) on [-4, 4], +-1 beyond:
// |error| < 5e-7 against the float64 erf, with no exp call, so every lane stays in registers.
template <class V>
inline __attribute__((always_inline)) V erf_rational(V x) {
  x = x < -4.0f ? V{} - 4.0f : x;
  x = x > 4.0f ? V{} + 4.0f : x;
  const V x2 = x * x;
  V p = V{} - 2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  V q = V{} - 1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return x * p / q;
}

// x <- x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)), BERT's exact GELU.
template <class V>
inline __attribute__((always_inline)) void gelu_lanes(float* x, size_t n) {
  constexpr size_t L = sizeof(V) / sizeof(float);
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  size_t i = 0;
  for (; i + L <= n; i += L) {
    V v;
    std::memcpy(&v, x + i, sizeof(V));
    v = 0.5f * v * (1.0f + erf_rational(v * kInvSqrt2));
    std::memcpy(x + i, &v, sizeof(V));
  }
  if (i < n) {
    V v{};
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = 0.5f * v * (1.0f + erf_rational(v * kInvSqrt2));
    std::memcpy(x + i, &v, (n - i) * sizeof(float));
  }
}

// e^x to about 2 ulp on [-87, 88] (0 below, clamped above): x = k ln 2 + r with |r| <= ln2 / 2,
// e^r by its degree-6 Taylor polynomial, 2^k put into the exponent bits.
template <class V>
inline __attribute__((always_inline)) V exp_lanes(V x) {
  using VI = typename IntVecOf<V>::type;
  x = x < -87.3f ? V{} - 87.3f : x;
  x = x > 88.3f ? V{} + 88.3f : x;
  V k = x * 1.44269504088896341f;
  // Round to nearest: truncate k + 0.5 toward zero, one less where that rounded a negative up.
  VI ki = __builtin_convertvector(k + 0.5f, VI);
  V kf = __builtin_convertvector(ki, V);
  const VI up = kf > k + 0.5f;
  ki += up;  // -1 where true
  kf = __builtin_convertvector(ki, V);
  const V r = (x - kf * 0.693145751953125f) - kf * 1.42860682030941723212e-6f;
  V p = V{} + (1.0f / 720);
  p = p * r + (1.0f / 120);
  p = p * r + (1.0f / 24);
  p = p * r + (1.0f / 6);
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  V scale;
  const VI bits = (ki + 127) << 23;
  std::memcpy(&scale, &bits, sizeof(V));
  return p * scale;
}

// x <- softmax(x) over n values: the max subtracted, e^x, normalised.
template <class V>
inline __attribute__((always_inline)) void softmax_lanes(float* x, size_t n) {
  constexpr size_t L = sizeof(V) / sizeof(float);
  if (n == 0) return;
  float m = x[0];
  for (size_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  float sum = 0;
  size_t i = 0;
  for (; i + L <= n; i += L) {
    V v;
    std::memcpy(&v, x + i, sizeof(V));
    v = exp_lanes(v - m);
    std::memcpy(x + i, &v, sizeof(V));
    for (size_t l = 0; l < L; ++l) sum += v[l];
  }
  if (i < n) {
    V v = V{} - 100.0f;  // padding lanes: e^-100 ~ 0, never stored
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = exp_lanes(v - m);
    for (size_t l = 0; l < n - i; ++l) sum += v[l];
    std::memcpy(x + i, &v, (n - i) * sizeof(float));
  }
  const float inv = 1.0f / sum;
  for (size_t j = 0; j < n; ++j) x[j] *= inv;
}

}  // namespace
}  // namespace sable
