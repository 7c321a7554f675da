// Row-wise operations of the transformer forward pass (bert.cpp), on the calling thread.
#pragma once
#include <cstddef>

namespace sable {

// Each of `rows` rows of x (dim values) <- gamma * (x - mean) / sqrt(var + eps) + beta.
void layer_norm_rows(float* x, size_t rows, size_t dim, const float* gamma, const float* beta, float eps);

// x <- x * Phi(x), the exact (erf) GELU of BERT (KernelTable::gelu_f32).
void gelu(float* x, size_t n);

// x <- softmax(x) over n values.
void softmax(float* x, size_t n);

// Scales v to unit L2 norm (no-op for a zero vector).
void normalize_l2(float* v, size_t n);

}  // namespace sable
