// 8-bit scalar quantizer: per-dimension min and scale trained on data.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../common.h"

namespace sable {

class Reader;
class Writer;

class Sq8 {
 public:
  Sq8() = default;
  explicit Sq8(size_t dim) : dim_(dim), vmin_(dim, 0.f), scale_(dim, 1.f) {}

  size_t dim() const { return dim_; }
  // Trains min/scale on n rows (row-major).
  void train(const float* x, size_t n);
  void encode(const float* x, uint8_t* code) const;
  void decode(const uint8_t* code, float* x) const;
  // Internal distance (see common.h) between a prepared query and a code.
  float distance(Metric m, const float* q, const uint8_t* code) const;
  const float* vmin() const { return vmin_.data(); }
  const float* scale() const { return scale_.data(); }

  void save(Writer& w) const;
  void load(Reader& r);

 private:
  size_t dim_ = 0;
  std::vector<float> vmin_, scale_;
};

}  // namespace sable
