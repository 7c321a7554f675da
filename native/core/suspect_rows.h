// A fast pass over a batch of vectors for the rows an upsert may have to refuse: a value that is
// not finite, or a squared length past a limit. The engine's own rule (engine/dataset/writes.ts
// checkValues, in double precision) decides about each row found here; this pass sums in float32,
// in lanes, so its caller sets the limit a little below the rule's and nothing the rule refuses
// is missed. On a bulk load the rule alone, value by value on the service's thread, took about
// 10 ms of each 5,000 x 768 row group.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable {

// The first row from `from` on with a non-finite value or a sum of squares above
// `squared_limit`; -1 when there is none.
int64_t first_suspect_row(const float* values, size_t rows, size_t dim, size_t from, float squared_limit);

}  // namespace sable
