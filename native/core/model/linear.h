// A linear layer y = x W^T + b with W packed once into the active kernel table's GEMM panels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sable {

// The arithmetic of a model's linear layers: float32, or bfloat16 inputs and weights with float
// sums (where the CPU multiplies bfloat16 natively: KernelTable::gemm_bf16_panels).
enum class Precision : uint8_t { F32, Bf16 };

class Linear {
 public:
  Linear() = default;
  // weight: out x in (a PyTorch Linear's layout); bias: out values, or null for none. Bf16 needs
  // the active kernel table's gemm_bf16_panels.
  Linear(const float* weight, const float* bias, size_t in, size_t out, Precision precision);

  size_t in() const { return in_; }
  size_t out() const { return out_; }
  // y (rows x ldy, columns [0, out) written) = x (rows x in) W^T + b, on the calling thread.
  void apply(const float* x, size_t rows, float* y, size_t ldy) const;
  size_t memory_bytes() const {
    return (panels_.capacity() + bias_.capacity()) * sizeof(float) + panels_bf16_.capacity() * sizeof(uint32_t);
  }

 private:
  size_t in_ = 0, out_ = 0;
  std::vector<float> panels_, bias_;
  std::vector<uint32_t> panels_bf16_;  // used instead of panels_ when not empty
};

}  // namespace sable
