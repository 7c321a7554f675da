#include "suspect_rows.h"

namespace sable {

int64_t first_suspect_row(const float* values, size_t rows, size_t dim, size_t from, float squared_limit) {
  // Independent lanes let the compiler vectorize the sums without reordering one sum.
  constexpr size_t kLanes = 16;
  for (size_t r = from; r < rows; ++r) {
    const float* x = values + r * dim;
    float squares[kLanes] = {}, zeros[kLanes] = {};
    size_t i = 0;
    for (; i + kLanes <= dim; i += kLanes) {
      for (size_t j = 0; j < kLanes; ++j) {
        squares[j] += x[i + j] * x[i + j];
        // x * 0 is 0 for every finite x and NaN for infinities and NaN.
        zeros[j] += x[i + j] * 0.0f;
      }
    }
    float sum = 0.0f, zero = 0.0f;
    for (; i < dim; ++i) {
      sum += x[i] * x[i];
      zero += x[i] * 0.0f;
    }
    for (size_t j = 0; j < kLanes; ++j) {
      sum += squares[j];
      zero += zeros[j];
    }
    if (!(zero == 0.0f) || !(sum <= squared_limit)) return int64_t(r);
  }
  return -1;
}

}  // namespace sable
