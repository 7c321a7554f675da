// Element-wise kernels (KernelTable::gelu_f32), written once with GNU C vector extensions and
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

}  // namespace
}  // namespace sable
