// The full-precision vectors of one segment, row-major. Cosine rows are normalised on append so
// every index can score cosine as a negated dot product.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common.h"
#include "kernels/kernels.h"

namespace sable {

class VectorStore {
 public:
  VectorStore(size_t dim, Metric metric) : dim_(dim), metric_(metric) {}

  size_t dim() const { return dim_; }
  Metric metric() const { return metric_; }
  size_t size() const { return dim_ ? data_.size() / dim_ : 0; }
  const float* row(uint32_t r) const { return data_.data() + size_t(r) * dim_; }
  const float* data() const { return data_.data(); }
  void reserve(size_t rows) { data_.reserve(rows * dim_); }
  // Drops spare capacity once no more rows come (a sealed segment): growth left up to 2x.
  void shrink_to_fit() { data_.shrink_to_fit(); }
  void append(const float* rows, size_t n);
  // Replaces the contents (snapshot load).
  void assign(std::vector<float>&& data) { data_ = std::move(data); }
  size_t memory_bytes() const { return data_.capacity() * sizeof(float); }

  // Copies `q` into `out` in the form indexes expect (normalised for cosine).
  void prepare_query(const float* q, float* out) const;
  // Internal distance between a prepared query and row r.
  float distance(const float* prepared_query, uint32_t r) const {
    return distance(prepared_query, row(r));
  }
  float distance(const float* a, const float* b) const {
    const KernelTable& k = active_kernels();
    return metric_ == Metric::L2 ? k.l2sq_f32(a, b, dim_) : -k.ip_f32(a, b, dim_);
  }

 private:
  size_t dim_;
  Metric metric_;
  std::vector<float> data_;
};

// Scales v to unit L2 norm in place (no-op for a zero vector).
void normalize(float* v, size_t d);

}  // namespace sable
