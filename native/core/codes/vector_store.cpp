#include "vector_store.h"

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "../kernels/half.h"
#include "../kernels/kernels.h"

namespace sable {

void normalize(float* v, size_t d) {
  double s = 0;
  for (size_t i = 0; i < d; ++i) s += double(v[i]) * v[i];
  if (s <= 0) return;
  float inv = float(1.0 / std::sqrt(s));
  for (size_t i = 0; i < d; ++i) v[i] *= inv;
}

void VectorStore::take_reservation() {
  if (!reserved_rows_) return;
  const size_t rows = std::exchange(reserved_rows_, 0);
  if (!half_) {
    data_.reserve(rows * dim_);
    return;
  }
  halves_.reserve(rows * dim_);
  if (metric_ == Metric::Cosine) inv_norms_.reserve(rows);
}

void VectorStore::append(const float* rows, size_t n) {
  if (half_) throw Error(Code::internal, "rows cannot be appended to a half-precision store");
  take_reservation();
  size_t start = data_.size();
  data_.resize(start + n * dim_);
  std::memcpy(data_.data() + start, rows, n * dim_ * sizeof(float));
  if (metric_ == Metric::Cosine)
    for (size_t r = 0; r < n; ++r) normalize(data_.data() + start + r * dim_, dim_);
}

void VectorStore::read_row(uint32_t r, float* out) const {
  if (!half_) {
    std::memcpy(out, row(r), dim_ * sizeof(float));
    return;
  }
  active_kernels().f16_to_f32(halves_.data() + size_t(r) * dim_, out, dim_);
}

const float* VectorStore::float_row(uint32_t r, float* scratch) const {
  if (!half_) return row(r);
  read_float_row(r, scratch);
  return scratch;
}

void VectorStore::read_float_row(uint32_t r, float* out) const {
  read_row(r, out);
  if (half_ && metric_ == Metric::Cosine) normalize(out, dim_);
}

void VectorStore::append_row_of(const VectorStore& src, uint32_t r) {
  if (src.half_ && !half_ && data_.empty()) half_ = true;
  take_reservation();
  if (half_ && !src.half_) to_f32();
  if (!half_ && !src.half_) {
    append(src.row(r), 1);
    return;
  }
  if (!half_) {
    std::vector<float> row(dim_);
    src.read_row(r, row.data());
    append(row.data(), 1);
    return;
  }
  const uint16_t* h = src.halves_.data() + size_t(r) * dim_;
  halves_.insert(halves_.end(), h, h + dim_);
  if (metric_ == Metric::Cosine) inv_norms_.push_back(src.inv_norms_[r]);
}

void VectorStore::to_f16() {
  if (half_) return;
  assign_halves(narrowed());
  data_.shrink_to_fit();
}

std::vector<uint16_t> VectorStore::narrowed() const {
  // F16C where the CPU has it: the value-by-value conversion was most of a bulk load's narrowing
  // of each frozen partition (npm run bench:half).
  std::vector<uint16_t> h(data_.size());
  active_kernels().f32_to_f16(data_.data(), h.data(), data_.size());
  return h;
}

std::vector<float> VectorStore::inverse_norms_of(const std::vector<uint16_t>& halves) const {
  if (metric_ != Metric::Cosine || dim_ == 0) return {};
  const size_t rows = halves.size() / dim_;
  std::vector<float> inv(rows);
  std::vector<float> row(dim_);
  for (size_t r = 0; r < rows; ++r) {
    active_kernels().f16_to_f32(halves.data() + r * dim_, row.data(), dim_);
    double s = 0;
    for (size_t i = 0; i < dim_; ++i) s += double(row[i]) * row[i];
    inv[r] = s > 0 ? float(1.0 / std::sqrt(s)) : 0.0f;
  }
  return inv;
}

void VectorStore::assign_halves(std::vector<uint16_t>&& halves, std::vector<float>&& inv_norms) {
  if (metric_ == Metric::Cosine && inv_norms.size() * dim_ != halves.size()) inv_norms = inverse_norms_of(halves);
  halves_ = std::move(halves);
  data_.clear();
  half_ = true;
  inv_norms_ = metric_ == Metric::Cosine ? std::move(inv_norms) : std::vector<float>();
}

VectorStore VectorStore::keep_rows(const std::vector<uint32_t>& kept) const {
  VectorStore out(dim_, metric_);
  out.half_ = half_;
  if (half_) {
    out.halves_.resize(kept.size() * dim_);
    for (size_t i = 0; i < kept.size(); ++i)
      std::memcpy(out.halves_.data() + i * dim_, halves_.data() + size_t(kept[i]) * dim_, dim_ * sizeof(uint16_t));
    if (!inv_norms_.empty()) {
      out.inv_norms_.resize(kept.size());
      for (size_t i = 0; i < kept.size(); ++i) out.inv_norms_[i] = inv_norms_[kept[i]];
    }
  } else {
    out.data_.resize(kept.size() * dim_);
    for (size_t i = 0; i < kept.size(); ++i)
      std::memcpy(out.data_.data() + i * dim_, data_.data() + size_t(kept[i]) * dim_, dim_ * sizeof(float));
  }
  return out;
}

bool VectorStore::fits_f16_exactly() const {
  if (half_) return true;
  for (float v : data_)
    if (half_to_float(float_to_half(v)) != v) return false;
  return true;
}

void VectorStore::to_f32() {
  if (!half_) return;
  std::vector<float> f(halves_.size());
  active_kernels().f16_to_f32(halves_.data(), f.data(), halves_.size());
  // Float cosine rows are unit vectors (the float distance has no norm correction): a rounded
  // row is about 1e-4 off unit length, enough to score an identical query below 0.
  if (metric_ == Metric::Cosine)
    for (size_t r = 0; r < f.size() / dim_; ++r) normalize(f.data() + r * dim_, dim_);
  assign(std::move(f));
  halves_.shrink_to_fit();
  inv_norms_.shrink_to_fit();
}

void VectorStore::prepare_query(const float* q, float* out) const {
  std::memcpy(out, q, dim_ * sizeof(float));
  if (metric_ == Metric::Cosine) normalize(out, dim_);
}

}  // namespace sable
