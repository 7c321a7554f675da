#include "linear.h"

#include "../kernels/kernels.h"
#include "../kernels/pack.h"

namespace sable {

Linear::Linear(const float* weight, const float* bias, size_t in, size_t out) : in_(in), out_(out) {
  const size_t width = active_kernels().panel_width;
  panels_ = pack_panels(weight, out, in, width);
  bias_.assign((out + width - 1) / width * width, 0.0f);
  if (bias)
    for (size_t i = 0; i < out; ++i) bias_[i] = bias[i];
}

void Linear::apply(const float* x, size_t rows, float* y, size_t ldy) const {
  GemmPanelsArgs a;
  a.a = x;
  a.k = in_;
  a.panels = panels_.data();
  a.bias = bias_.data();
  a.n = out_;
  a.c = y;
  a.ldc = ldy;
  active_kernels().gemm_f32_panels(a, 0, rows);
}

}  // namespace sable
