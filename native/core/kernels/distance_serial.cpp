// Scalar reference kernels: plain loops accumulating in float. This is the oracle the SIMD
// variants are tested against, and the fallback on any CPU.
#include "kernels.h"

#include <bit>
#include <cmath>

#include "four_lane_table.h"
#include "half.h"

namespace sable {

void dot_u8_f32_batch_reference(const float* w, const uint8_t* codes, size_t stride, const uint32_t* sel, size_t count,
                      float* out) {
  // Eight independent partial sums over whole groups of eight (the weights are zero past stride):
  // the compiler turns the inner loop into vector code.
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* c = codes + (sel ? sel[i] : i) * stride;
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (size_t t = 0; t < stride; t += 8)
      for (int l = 0; l < 8; ++l) acc[l] += w[t + l] * float(c[t + l]);
    out[i] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  }
}

void f32_to_f16_reference(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = float_to_half(in[i]);
}

void f16_to_f32_reference(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = half_to_float(in[i]);
}

void dot_u8_i8x2_batch_reference(const int8_t* hi, const int8_t* lo, float s, const uint8_t* codes, size_t stride,
                       const uint32_t* sel, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* c = codes + (sel ? sel[i] : i) * stride;
    int64_t h = 0, l = 0;
    for (size_t t = 0; t < stride; ++t) {
      h += int32_t(hi[t]) * int32_t(c[t]);
      l += int32_t(lo[t]) * int32_t(c[t]);
    }
    out[i] = s * float(h * 128 + l);
  }
}

void bits_dot_u4_batch_reference(const uint64_t* planes, size_t words, const uint64_t* codes, const uint32_t* sel,
                                 size_t count, uint32_t* out) {
  for (size_t i = 0; i < count; ++i) {
    const uint64_t* c = codes + (sel ? sel[i] : i) * words;
    uint32_t acc = 0;
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t n = 0;
      for (size_t w = 0; w < words; ++w) n += uint32_t(std::popcount(c[w] & planes[k * words + w]));
      acc += n << k;
    }
    out[i] = acc;
  }
}

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

float l2sq_f16(const float* q, const uint16_t* row, size_t d) {
  float s = 0;
  for (size_t i = 0; i < d; ++i) {
    const float t = q[i] - half_to_float(row[i]);
    s += t * t;
  }
  return s;
}

float ip_f16(const float* q, const uint16_t* row, size_t d) {
  float s = 0;
  for (size_t i = 0; i < d; ++i) s += q[i] * half_to_float(row[i]);
  return s;
}

// The panel tiles and element-wise kernels in portable vector code (SSE2 on x86).
constexpr KernelTable kTable = four_lane_table(Isa::Serial, {
    .l2sq_f32 = l2sq_f32,
    .ip_f32 = ip_f32,
    .cos_f32 = cos_f32,
    .l2sq_f16 = l2sq_f16,
    .ip_f16 = ip_f16,
    .l2sq_sq8 = l2sq_sq8,
    .ip_sq8 = ip_sq8,
    .cos_sq8 = cos_sq8,
});

}  // namespace

const KernelTable* kernels_serial() { return &kTable; }

}  // namespace sable
