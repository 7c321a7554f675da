// A linear layer y = x W^T + b with W packed once into the active kernel table's GEMM panels.
#pragma once
#include <cstddef>
#include <vector>

namespace sable {

class Linear {
 public:
  Linear() = default;
  // weight: out x in (a PyTorch Linear's layout); bias: out values, or null for none.
  Linear(const float* weight, const float* bias, size_t in, size_t out);

  size_t in() const { return in_; }
  size_t out() const { return out_; }
  // y (rows x ldy, columns [0, out) written) = x (rows x in) W^T + b, on the calling thread.
  void apply(const float* x, size_t rows, float* y, size_t ldy) const;
  size_t memory_bytes() const { return (panels_.capacity() + bias_.capacity()) * sizeof(float); }

 private:
  size_t in_ = 0, out_ = 0;
  std::vector<float> panels_, bias_;
};

}  // namespace sable
