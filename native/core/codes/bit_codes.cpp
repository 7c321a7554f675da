#include "bit_codes.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "../io.h"
#include "../kernels/kernels.h"

namespace sable {

namespace {

constexpr uint32_t kBitCodesFormat = 0x32544942;  // "BIT2"

constexpr int kRotationRounds = 3;

// Walsh-Hadamard transform of x (n a power of two), unnormalised.
void hadamard(float* x, size_t n) {
  for (size_t h = 1; h < n; h *= 2)
    for (size_t i = 0; i < n; i += 2 * h)
      for (size_t j = i; j < i + h; ++j) {
        const float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
}

}  // namespace

size_t BitCodes::code_bits(size_t dim) {
  size_t d = 64;
  while (d < dim) d *= 2;
  return d;
}

void BitCodes::init(size_t dim, Metric metric, const float* mean, uint64_t seed, size_t rows) {
  dim_ = dim;
  metric_ = metric;
  const size_t big = code_bits(dim);
  words_ = big / 64;
  std::mt19937_64 rng(seed);
  signs_flip_.resize(kRotationRounds * big);
  for (float& f : signs_flip_) f = (rng() >> 63) ? 1.0f : -1.0f;
  mean_.assign(mean, mean + dim);
  bits_.assign(rows * words_, 0);
  slope_.assign(rows, 0.0f);
  lo_slope_.assign(rows, 0.0f);
  offset_.assign(rows, 0.0f);
  error_.assign(rows, 0.0f);
}

void BitCodes::rotate(const float* v, float* out) const {
  // Rounds of random signs and a normalised Hadamard transform: an orthogonal map that spreads
  // every input direction over all D coordinates, in O(D log D) (a dense random rotation costs
  // D x dim multiply-adds a query and a row).
  const size_t big = words_ * 64;
  std::copy(v, v + dim_, out);
  std::fill(out + dim_, out + big, 0.0f);
  const float norm = 1.0f / std::sqrt(float(big));
  for (int r = 0; r < kRotationRounds; ++r) {
    const float* flip = signs_flip_.data() + size_t(r) * big;
    for (size_t i = 0; i < big; ++i) out[i] *= flip[i];
    hadamard(out, big);
    for (size_t i = 0; i < big; ++i) out[i] *= norm;
  }
}

void BitCodes::encode(size_t pos, const float* x, const float* c) {
  const size_t big = words_ * 64;
  thread_local std::vector<float> r, o;
  r.resize(dim_);
  o.resize(big);
  double rr = 0, mean_r = 0, xx = 0;
  for (size_t t = 0; t < dim_; ++t) {
    r[t] = x[t] - c[t];
    rr += double(r[t]) * r[t];
    mean_r += double(mean_[t]) * r[t];
    xx += double(x[t]) * x[t];
  }
  const double mult = metric_ == Metric::L2 ? 2.0 : 1.0;
  offset_[pos] = float(metric_ == Metric::L2 ? xx - 2.0 * mean_r : -mean_r);
  uint64_t* code = bits_.data() + pos * words_;
  std::fill(code, code + words_, uint64_t(0));
  const double norm = std::sqrt(rr);
  if (!(norm > 0)) {
    // The row is its centroid: the estimate is exactly 0 (scale 0, no error).
    slope_[pos] = lo_slope_[pos] = error_[pos] = 0.0f;
    return;
  }
  rotate(r.data(), o.data());
  double abs_sum = 0;
  uint32_t ones = 0;
  for (size_t i = 0; i < big; ++i) {
    abs_sum += std::fabs(double(o[i]));
    if (o[i] > 0) {
      code[i / 64] |= uint64_t(1) << (i % 64);
      ++ones;
    }
  }
  // <xbar, o> with o of unit norm: sum |o_i| / (|r| sqrt(D)).
  const double a = std::max(abs_sum / (norm * std::sqrt(double(big))), 1e-6);
  const double slope = mult * norm / (a * std::sqrt(double(big)));
  slope_[pos] = float(slope);
  lo_slope_[pos] = float(slope * (2.0 * ones - double(big)));
  error_[pos] = float(mult * norm * std::sqrt(std::max(0.0, 1.0 - a * a)) / (a * std::sqrt(double(big - 1))));
}

void BitCodes::prepare(const float* q, Query& out) const {
  const size_t big = words_ * 64;
  out.rotated.resize(big);
  out.planes.assign(4 * words_, 0);
  thread_local std::vector<float> centred;
  centred.resize(dim_);
  double nn = 0;
  for (size_t t = 0; t < dim_; ++t) {
    centred[t] = q[t] - mean_[t];
    nn += double(centred[t]) * centred[t];
  }
  out.norm = float(std::sqrt(nn));
  rotate(centred.data(), out.rotated.data());
  float lo = out.rotated[0], hi = out.rotated[0];
  for (float v : out.rotated) lo = std::min(lo, v), hi = std::max(hi, v);
  out.lo = lo;
  out.step = hi > lo ? (hi - lo) / 15.0f : 0.0f;
  const float inv = out.step > 0 ? 1.0f / out.step : 0.0f;
  uint32_t sum = 0;
  for (size_t w = 0; w < words_; ++w) {
    const float* v = out.rotated.data() + w * 64;
    uint64_t p0 = 0, p1 = 0, p2 = 0, p3 = 0;
    for (uint32_t j = 0; j < 64; ++j) {
      const uint64_t u = std::min(uint32_t((v[j] - lo) * inv + 0.5f), 15u);
      sum += uint32_t(u);
      p0 |= (u & 1) << j;
      p1 |= ((u >> 1) & 1) << j;
      p2 |= ((u >> 2) & 1) << j;
      p3 |= (u >> 3) << j;
    }
    out.planes[w] = p0;
    out.planes[words_ + w] = p1;
    out.planes[2 * words_ + w] = p2;
    out.planes[3 * words_ + w] = p3;
  }
  out.sum_u = float(sum);
}

void BitCodes::lower_bounds(const Query& q, size_t first, const uint32_t* sel, size_t count, uint32_t* dots,
                            float base, float confidence, float* lower) const {
  active_kernels().bits_dot_u4_batch(q.planes.data(), words_, bits_.data() + first * words_, sel, count, dots);
  // The estimate is offset - slope <xbar, qbar> sqrt(D), where
  // <xbar, qbar> sqrt(D) = lo (2 popcount - D) + step (2 <bits, u> - sum u).
  const float two_step = 2.0f * q.step, step_sum = q.step * q.sum_u, margin = confidence * q.norm;
  const float* slope = slope_.data() + first;
  const float* lo_slope = lo_slope_.data() + first;
  const float* offset = offset_.data() + first;
  const float* error = error_.data() + first;
  if (!sel) {
    for (size_t i = 0; i < count; ++i)
      lower[i] = base + offset[i] - q.lo * lo_slope[i] - slope[i] * (two_step * float(dots[i]) - step_sum) - margin * error[i];
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const size_t j = sel[i];
    lower[i] = base + offset[j] - q.lo * lo_slope[j] - slope[j] * (two_step * float(dots[i]) - step_sum) - margin * error[j];
  }
}

void BitCodes::save(Writer& w) const {
  w.u32(kBitCodesFormat);
  w.vec(signs_flip_);
  w.vec(mean_);
  w.vec(bits_);
  w.vec(slope_);
  w.vec(lo_slope_);
  w.vec(offset_);
  w.vec(error_);
}

void BitCodes::load(Reader& r, size_t dim, Metric metric, size_t rows) {
  auto corrupt = [](const char* what) { throw Error(Code::snapshot_corrupt, std::string("bit codes snapshot: ") + what); };
  if (r.u32() != kBitCodesFormat) corrupt("unknown format");
  dim_ = dim;
  metric_ = metric;
  words_ = code_bits(dim) / 64;
  signs_flip_ = r.vec<float>();
  mean_ = r.vec<float>();
  bits_ = r.vec<uint64_t>();
  slope_ = r.vec<float>();
  lo_slope_ = r.vec<float>();
  offset_ = r.vec<float>();
  error_ = r.vec<float>();
  if (signs_flip_.size() != kRotationRounds * words_ * 64 || mean_.size() != dim) corrupt("rotation size");
  for (float f : signs_flip_)
    if (f != 1.0f && f != -1.0f) corrupt("rotation signs");
  if (bits_.size() != rows * words_ || slope_.size() != rows || lo_slope_.size() != rows || offset_.size() != rows ||
      error_.size() != rows)
    corrupt("code table size");
  for (const auto* v : {&mean_, &slope_, &lo_slope_, &offset_, &error_})
    for (float f : *v)
      if (!std::isfinite(f)) corrupt("non-finite value");
}

BitCodes BitCodes::gather(const std::vector<uint32_t>& from) const {
  BitCodes out;
  out.dim_ = dim_;
  out.words_ = words_;
  out.metric_ = metric_;
  out.signs_flip_ = signs_flip_;
  out.mean_ = mean_;
  out.bits_.assign(from.size() * words_, 0);
  for (auto* v : {&out.slope_, &out.lo_slope_, &out.offset_, &out.error_}) v->assign(from.size(), 0.0f);
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == kUnfilled) continue;
    const size_t p = from[i];
    std::copy_n(bits_.data() + p * words_, words_, out.bits_.data() + i * words_);
    out.slope_[i] = slope_[p];
    out.lo_slope_[i] = lo_slope_[p];
    out.offset_[i] = offset_[p];
    out.error_[i] = error_[p];
  }
  return out;
}

size_t BitCodes::memory_bytes() const {
  return (signs_flip_.capacity() + mean_.capacity() + slope_.capacity() + lo_slope_.capacity() + offset_.capacity() +
          error_.capacity()) * sizeof(float) + bits_.capacity() * sizeof(uint64_t);
}

}  // namespace sable
