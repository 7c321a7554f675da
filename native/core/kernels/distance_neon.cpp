// NEON kernels (aarch64): 4 floats a step, four independent accumulators in the main loop
// (16 floats an iteration), one horizontal sum (vaddvq_f32) at the end, a scalar tail of at most
// 3 elements. No element past d is ever read. Compiled only on aarch64, where NEON is baseline.
#if !defined(__aarch64__) || !defined(__ARM_NEON)
#error "distance_neon.cpp is for aarch64 builds only"
#endif

#include <arm_neon.h>

#include "kernels.h"
#include "four_lane_table.h"
#include "half.h"

namespace sable {
namespace {

inline float cos_finish(float dot, float na, float nb) {
  if (na == 0.0f || nb == 0.0f) return 1.0f;
  return 1.0f - dot / (__builtin_sqrtf(na) * __builtin_sqrtf(nb));
}

inline float hsum4(float32x4_t s0, float32x4_t s1, float32x4_t s2, float32x4_t s3) {
  return vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
}

inline float decode1(const uint8_t* c, const float* vmin, const float* scale, size_t i) {
  return vmin[i] + scale[i] * static_cast<float>(c[i]);
}

// 16 codes (exactly 16 bytes read) widened u8 -> u16 -> u32 -> f32.
struct Codes16 {
  float32x4_t c0, c1, c2, c3;
};
inline Codes16 codes16(const uint8_t* c) {
  uint8x16_t v = vld1q_u8(c);
  uint16x8_t lo = vmovl_u8(vget_low_u8(v));
  uint16x8_t hi = vmovl_high_u8(v);
  return {vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo))), vcvtq_f32_u32(vmovl_high_u16(lo)),
          vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi))), vcvtq_f32_u32(vmovl_high_u16(hi))};
}

// 4 codes (exactly 4 bytes read) widened to f32.
inline float32x4_t codes4(const uint8_t* c) {
  uint32_t w;
  __builtin_memcpy(&w, c, 4);
  uint8x8_t v = vreinterpret_u8_u32(vdup_n_u32(w));
  return vcvtq_f32_u32(vmovl_u16(vget_low_u16(vmovl_u8(v))));
}

// x = vmin + scale * code.
inline float32x4_t decode4(float32x4_t cf, const float* vmin, const float* scale) {
  return vfmaq_f32(vld1q_f32(vmin), vld1q_f32(scale), cf);
}

float l2sq_f32(const float* a, const float* b, size_t d) {
  float32x4_t s0 = vdupq_n_f32(0.f), s1 = vdupq_n_f32(0.f), s2 = vdupq_n_f32(0.f), s3 = vdupq_n_f32(0.f);
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    float32x4_t t0 = vsubq_f32(vld1q_f32(a + i), vld1q_f32(b + i));
    float32x4_t t1 = vsubq_f32(vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    float32x4_t t2 = vsubq_f32(vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
    float32x4_t t3 = vsubq_f32(vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    s0 = vfmaq_f32(s0, t0, t0);
    s1 = vfmaq_f32(s1, t1, t1);
    s2 = vfmaq_f32(s2, t2, t2);
    s3 = vfmaq_f32(s3, t3, t3);
  }
  for (; i + 4 <= d; i += 4) {
    float32x4_t t = vsubq_f32(vld1q_f32(a + i), vld1q_f32(b + i));
    s0 = vfmaq_f32(s0, t, t);
  }
  float tail = 0.f;
  for (; i < d; ++i) {
    float t = a[i] - b[i];
    tail += t * t;
  }
  return hsum4(s0, s1, s2, s3) + tail;
}

float ip_f32(const float* a, const float* b, size_t d) {
  float32x4_t s0 = vdupq_n_f32(0.f), s1 = vdupq_n_f32(0.f), s2 = vdupq_n_f32(0.f), s3 = vdupq_n_f32(0.f);
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
    s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
    s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
  }
  for (; i + 4 <= d; i += 4) s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
  float tail = 0.f;
  for (; i < d; ++i) tail += a[i] * b[i];
  return hsum4(s0, s1, s2, s3) + tail;
}

float cos_f32(const float* a, const float* b, size_t d) {
  float32x4_t dot0 = vdupq_n_f32(0.f), dot1 = vdupq_n_f32(0.f);
  float32x4_t na0 = vdupq_n_f32(0.f), na1 = vdupq_n_f32(0.f);
  float32x4_t nb0 = vdupq_n_f32(0.f), nb1 = vdupq_n_f32(0.f);
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    float32x4_t x0 = vld1q_f32(a + i), y0 = vld1q_f32(b + i);
    float32x4_t x1 = vld1q_f32(a + i + 4), y1 = vld1q_f32(b + i + 4);
    dot0 = vfmaq_f32(dot0, x0, y0);
    na0 = vfmaq_f32(na0, x0, x0);
    nb0 = vfmaq_f32(nb0, y0, y0);
    dot1 = vfmaq_f32(dot1, x1, y1);
    na1 = vfmaq_f32(na1, x1, x1);
    nb1 = vfmaq_f32(nb1, y1, y1);
  }
  if (i + 4 <= d) {
    float32x4_t x = vld1q_f32(a + i), y = vld1q_f32(b + i);
    dot0 = vfmaq_f32(dot0, x, y);
    na0 = vfmaq_f32(na0, x, x);
    nb0 = vfmaq_f32(nb0, y, y);
    i += 4;
  }
  float dot = 0.f, na = 0.f, nb = 0.f;
  for (; i < d; ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  dot += vaddvq_f32(vaddq_f32(dot0, dot1));
  na += vaddvq_f32(vaddq_f32(na0, na1));
  nb += vaddvq_f32(vaddq_f32(nb0, nb1));
  return cos_finish(dot, na, nb);
}

float l2sq_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  float32x4_t s0 = vdupq_n_f32(0.f), s1 = vdupq_n_f32(0.f), s2 = vdupq_n_f32(0.f), s3 = vdupq_n_f32(0.f);
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    Codes16 c = codes16(code + i);
    float32x4_t t0 = vsubq_f32(vld1q_f32(q + i), decode4(c.c0, vmin + i, scale + i));
    float32x4_t t1 = vsubq_f32(vld1q_f32(q + i + 4), decode4(c.c1, vmin + i + 4, scale + i + 4));
    float32x4_t t2 = vsubq_f32(vld1q_f32(q + i + 8), decode4(c.c2, vmin + i + 8, scale + i + 8));
    float32x4_t t3 = vsubq_f32(vld1q_f32(q + i + 12), decode4(c.c3, vmin + i + 12, scale + i + 12));
    s0 = vfmaq_f32(s0, t0, t0);
    s1 = vfmaq_f32(s1, t1, t1);
    s2 = vfmaq_f32(s2, t2, t2);
    s3 = vfmaq_f32(s3, t3, t3);
  }
  for (; i + 4 <= d; i += 4) {
    float32x4_t t = vsubq_f32(vld1q_f32(q + i), decode4(codes4(code + i), vmin + i, scale + i));
    s0 = vfmaq_f32(s0, t, t);
  }
  float tail = 0.f;
  for (; i < d; ++i) {
    float t = q[i] - decode1(code, vmin, scale, i);
    tail += t * t;
  }
  return hsum4(s0, s1, s2, s3) + tail;
}

float ip_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  float32x4_t s0 = vdupq_n_f32(0.f), s1 = vdupq_n_f32(0.f), s2 = vdupq_n_f32(0.f), s3 = vdupq_n_f32(0.f);
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    Codes16 c = codes16(code + i);
    s0 = vfmaq_f32(s0, vld1q_f32(q + i), decode4(c.c0, vmin + i, scale + i));
    s1 = vfmaq_f32(s1, vld1q_f32(q + i + 4), decode4(c.c1, vmin + i + 4, scale + i + 4));
    s2 = vfmaq_f32(s2, vld1q_f32(q + i + 8), decode4(c.c2, vmin + i + 8, scale + i + 8));
    s3 = vfmaq_f32(s3, vld1q_f32(q + i + 12), decode4(c.c3, vmin + i + 12, scale + i + 12));
  }
  for (; i + 4 <= d; i += 4) s0 = vfmaq_f32(s0, vld1q_f32(q + i), decode4(codes4(code + i), vmin + i, scale + i));
  float tail = 0.f;
  for (; i < d; ++i) tail += q[i] * decode1(code, vmin, scale, i);
  return hsum4(s0, s1, s2, s3) + tail;
}

float cos_sq8(const float* q, const uint8_t* code, const float* vmin, const float* scale, size_t d) {
  float32x4_t dot0 = vdupq_n_f32(0.f), dot1 = vdupq_n_f32(0.f);
  float32x4_t nq0 = vdupq_n_f32(0.f), nq1 = vdupq_n_f32(0.f);
  float32x4_t nx0 = vdupq_n_f32(0.f), nx1 = vdupq_n_f32(0.f);
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    Codes16 c = codes16(code + i);
    float32x4_t y0 = vld1q_f32(q + i), x0 = decode4(c.c0, vmin + i, scale + i);
    float32x4_t y1 = vld1q_f32(q + i + 4), x1 = decode4(c.c1, vmin + i + 4, scale + i + 4);
    dot0 = vfmaq_f32(dot0, y0, x0);
    nq0 = vfmaq_f32(nq0, y0, y0);
    nx0 = vfmaq_f32(nx0, x0, x0);
    dot1 = vfmaq_f32(dot1, y1, x1);
    nq1 = vfmaq_f32(nq1, y1, y1);
    nx1 = vfmaq_f32(nx1, x1, x1);
    float32x4_t y2 = vld1q_f32(q + i + 8), x2 = decode4(c.c2, vmin + i + 8, scale + i + 8);
    float32x4_t y3 = vld1q_f32(q + i + 12), x3 = decode4(c.c3, vmin + i + 12, scale + i + 12);
    dot0 = vfmaq_f32(dot0, y2, x2);
    nq0 = vfmaq_f32(nq0, y2, y2);
    nx0 = vfmaq_f32(nx0, x2, x2);
    dot1 = vfmaq_f32(dot1, y3, x3);
    nq1 = vfmaq_f32(nq1, y3, y3);
    nx1 = vfmaq_f32(nx1, x3, x3);
  }
  for (; i + 4 <= d; i += 4) {
    float32x4_t y = vld1q_f32(q + i), x = decode4(codes4(code + i), vmin + i, scale + i);
    dot0 = vfmaq_f32(dot0, y, x);
    nq0 = vfmaq_f32(nq0, y, y);
    nx0 = vfmaq_f32(nx0, x, x);
  }
  float dot = 0.f, nq = 0.f, nx = 0.f;
  for (; i < d; ++i) {
    float x = decode1(code, vmin, scale, i);
    dot += q[i] * x;
    nq += q[i] * q[i];
    nx += x * x;
  }
  dot += vaddvq_f32(vaddq_f32(dot0, dot1));
  nq += vaddvq_f32(vaddq_f32(nq0, nq1));
  nx += vaddvq_f32(vaddq_f32(nx0, nx1));
  return cos_finish(dot, nq, nx);
}

// Half rows widened 4 at a time (fcvtl); the tail converts one by one.
float l2sq_f16(const float* q, const uint16_t* row, size_t d) {
  float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0);
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    float32x4_t t0 = vsubq_f32(vld1q_f32(q + i), vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(row + i))));
    float32x4_t t1 = vsubq_f32(vld1q_f32(q + i + 4), vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(row + i + 4))));
    s0 = vfmaq_f32(s0, t0, t0);
    s1 = vfmaq_f32(s1, t1, t1);
  }
  float s = vaddvq_f32(vaddq_f32(s0, s1));
  for (; i < d; ++i) {
    const float t = q[i] - half_to_float(row[i]);
    s += t * t;
  }
  return s;
}

float ip_f16(const float* q, const uint16_t* row, size_t d) {
  float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0);
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    s0 = vfmaq_f32(s0, vld1q_f32(q + i), vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(row + i))));
    s1 = vfmaq_f32(s1, vld1q_f32(q + i + 4), vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(row + i + 4))));
  }
  float s = vaddvq_f32(vaddq_f32(s0, s1));
  for (; i < d; ++i) s += q[i] * half_to_float(row[i]);
  return s;
}

constexpr KernelTable kTable = four_lane_table(Isa::Neon, {
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

const KernelTable* kernels_neon() { return &kTable; }

}  // namespace sable
