// Scalar reference kernels: plain loops accumulating in float. This is the oracle the SIMD
// variants are tested against, and the fallback on any CPU.
#include "kernels.h"

#include <cmath>

namespace sable {
namespace {

float cos_finish(float dot, float na, float nb) {
  if (na == 0.0f || nb == 0.0f) return 1.0f;
  return 1.0f - dot / (std::sqrt(na) * std::sqrt(nb));
}

float l2sq_f32(const float* a, const float* b, size_t d) {
  float s = 0.0f;
  for (size_t i = 0; i < d; ++i) {
    float t = a[i] - b[i];
    s += t * t;
  }
  return s;
}

float ip_f32(const float* a, const float* b, size_t d) {
  float s = 0.0f;
  for (size_t i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}

float cos_f32(const float* a, const float* b, size_t d) {
  float dot = 0.0f, na = 0.0f, nb = 0.0f;
  for (size_t i = 0; i < d; ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return cos_finish(dot, na, nb);
}

float l2sq_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  float s = 0.0f;
  for (size_t i = 0; i < d; ++i) {
    float x = vmin[i] + scale[i] * static_cast<float>(code[i]);
    float t = q[i] - x;
    s += t * t;
  }
  return s;
}

float ip_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  float s = 0.0f;
  for (size_t i = 0; i < d; ++i) {
    float x = vmin[i] + scale[i] * static_cast<float>(code[i]);
    s += q[i] * x;
  }
  return s;
}

float cos_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  float dot = 0.0f, nq = 0.0f, nx = 0.0f;
  for (size_t i = 0; i < d; ++i) {
    float x = vmin[i] + scale[i] * static_cast<float>(code[i]);
    dot += q[i] * x;
    nq += q[i] * q[i];
    nx += x * x;
  }
  return cos_finish(dot, nq, nx);
}

const KernelTable kTable = {Isa::Serial, l2sq_f32, ip_f32, cos_f32, l2sq_sq8, ip_sq8, cos_sq8};

}  // namespace

const KernelTable* kernels_serial() { return &kTable; }

}  // namespace sable
