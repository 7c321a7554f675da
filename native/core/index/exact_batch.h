// The exact scan of many queries at once (a search batch over a partition without an index):
// every row is scored against every query, the rows read once for all of them.
#pragma once
#include <cstddef>

#include "../bitset.h"
#include "../codes/vector_store.h"
#include "../topk.h"

namespace sable {

// outs[i] receives the best of rows [begin, end) of `store` (those `allow` passes, all when null)
// for the i-th of nq prepared queries (VectorStore::prepare_query), each with the distance
// store.distance gives: called over consecutive ranges, the same answers, ties included, as
// exact_scan per query.
void exact_scan_batch(const VectorStore& store, const float* prepared, size_t nq, const Bitset* allow, TopK* outs,
                      uint32_t begin, uint32_t end);

}  // namespace sable
