#include "vector_store.h"

#include <cmath>
#include <cstring>

namespace sable {

void normalize(float* v, size_t d) {
  double s = 0;
  for (size_t i = 0; i < d; ++i) s += double(v[i]) * v[i];
  if (s <= 0) return;
  float inv = float(1.0 / std::sqrt(s));
  for (size_t i = 0; i < d; ++i) v[i] *= inv;
}

void VectorStore::append(const float* rows, size_t n) {
  size_t start = data_.size();
  data_.resize(start + n * dim_);
  std::memcpy(data_.data() + start, rows, n * dim_ * sizeof(float));
  if (metric_ == Metric::Cosine)
    for (size_t r = 0; r < n; ++r) normalize(data_.data() + start + r * dim_, dim_);
}

void VectorStore::prepare_query(const float* q, float* out) const {
  std::memcpy(out, q, dim_ * sizeof(float));
  if (metric_ == Metric::Cosine) normalize(out, dim_);
}

}  // namespace sable
