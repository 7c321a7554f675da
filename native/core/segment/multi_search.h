// Search across the segments of a dataset: each segment plans its own strategy, the per-segment
// top-k lists are merged, and a receipt says what was done.
#pragma once
#include <memory>
#include <vector>

#include "segment.h"

namespace sable {

struct SearchResult {
  std::vector<int64_t> ids;
  std::vector<float> scores;  // user-facing scores (see score_from_distance), ascending
  std::vector<SegmentReceipt> segments;
};

SearchResult search_segments(const std::vector<std::shared_ptr<Segment>>& segments, const float* query,
                             const QueryOptions& opts);

// Answers nq queries (row-major) on up to `threads` threads (the caller's thread included).
std::vector<SearchResult> search_batch(const std::vector<std::shared_ptr<Segment>>& segments, const float* queries,
                                       size_t nq, const QueryOptions& opts, unsigned threads);

}  // namespace sable
