#include "linear.h"

#include "../common.h"
#include "../kernels/kernels.h"
#include "../kernels/pack.h"

namespace sable {

Linear::Linear(const float* weight, const float* bias, size_t in, size_t out, Precision precision) : in_(in), out_(out) {
  const KernelTable& kt = active_kernels();
  const size_t width = kt.panel_width;
  if (precision == Precision::Bf16) {
    if (!kt.gemm_bf16_panels) throw Error(Code::unsupported, "this CPU has no bfloat16 matrix product (AVX512-BF16)");
    panels_bf16_ = pack_bf16_panels(weight, out, in, width);
  } else {
    panels_ = pack_panels(weight, out, in, width);
  }
  bias_.assign((out + width - 1) / width * width, 0.0f);
  if (bias)
    for (size_t i = 0; i < out; ++i) bias_[i] = bias[i];
}

void Linear::apply(const float* x, size_t rows, float* y, size_t ldy) const {
  if (!panels_bf16_.empty()) {
    // The inputs rounded once per call (rows x in values, against rows x in x out products).
    thread_local std::vector<uint16_t> xb;
    const size_t k2 = (in_ + 1) / 2;
    xb.assign(rows * 2 * k2, 0);
    for (size_t r = 0; r < rows; ++r)
      for (size_t t = 0; t < in_; ++t) xb[r * 2 * k2 + t] = bf16_of(x[r * in_ + t]);
    GemmBf16PanelsArgs a;
    a.a = xb.data();
    a.k2 = k2;
    a.panels = panels_bf16_.data();
    a.bias = bias_.data();
    a.n = out_;
    a.c = y;
    a.ldc = ldy;
    active_kernels().gemm_bf16_panels(a, 0, rows);
    return;
  }
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
