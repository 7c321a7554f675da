#include "sq8.h"

#include <algorithm>
#include <cmath>

#include "../io.h"
#include "../kernels/kernels.h"

namespace sable {

void Sq8::train(const float* x, size_t n) {
  std::vector<float> vmax(dim_, -INFINITY);
  std::fill(vmin_.begin(), vmin_.end(), INFINITY);
  for (size_t r = 0; r < n; ++r)
    for (size_t i = 0; i < dim_; ++i) {
      float v = x[r * dim_ + i];
      vmin_[i] = std::min(vmin_[i], v);
      vmax[i] = std::max(vmax[i], v);
    }
  for (size_t i = 0; i < dim_; ++i) {
    if (n == 0) vmin_[i] = 0, vmax[i] = 0;
    float range = vmax[i] - vmin_[i];
    scale_[i] = range > 0 ? range / 255.0f : 1.0f;
  }
}

void Sq8::encode(const float* x, uint8_t* code) const {
  for (size_t i = 0; i < dim_; ++i) {
    float c = std::nearbyint((x[i] - vmin_[i]) / scale_[i]);
    code[i] = uint8_t(std::clamp(c, 0.0f, 255.0f));
  }
}

void Sq8::decode(const uint8_t* code, float* x) const {
  for (size_t i = 0; i < dim_; ++i) x[i] = vmin_[i] + scale_[i] * code[i];
}

float Sq8::distance(Metric m, const float* q, const uint8_t* code) const {
  const KernelTable& k = active_kernels();
  return m == Metric::L2 ? k.l2sq_sq8(q, code, vmin_.data(), scale_.data(), dim_)
                         : -k.ip_sq8(q, code, vmin_.data(), scale_.data(), dim_);
}

void Sq8::save(Writer& w) const {
  w.u64(dim_);
  w.vec(vmin_);
  w.vec(scale_);
}

void Sq8::load(Reader& r) {
  dim_ = r.u64();
  vmin_ = r.vec<float>();
  scale_ = r.vec<float>();
  if (vmin_.size() != dim_ || scale_.size() != dim_) throw Error(Code::snapshot_corrupt, "sq8 quantizer has a wrong size");
}

}  // namespace sable
