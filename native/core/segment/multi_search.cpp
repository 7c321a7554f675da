#include "multi_search.h"

#include <atomic>
#include <thread>

namespace sable {

namespace {

void finish(Metric metric, TopKOf<int64_t>& merged, SearchResult& result) {
  auto sorted = merged.take_sorted();
  result.ids.reserve(sorted.size());
  result.scores.reserve(sorted.size());
  for (const auto& e : sorted) {
    result.ids.push_back(e.label);
    result.scores.push_back(score_from_distance(metric, e.distance));
  }
}

// Queries [first, last) of a batch: segments that scan every row do it once for the whole range
// (Segment::search_exact_batch), the others per query.
void search_range(const std::vector<std::shared_ptr<Segment>>& segments, const float* queries, size_t first,
                  size_t last, const QueryOptions& opts, std::vector<SearchResult>& results) {
  const size_t dim = segments.front()->dim(), n = last - first;
  std::vector<TopKOf<int64_t>> merged(n, TopKOf<int64_t>(opts.k));
  for (auto& m : merged) m.set_distinct(opts.distinct);
  std::vector<SegmentReceipt> receipts(n);
  for (size_t i = first; i < last; ++i) results[i].segments.resize(segments.size());
  for (size_t s = 0; s < segments.size(); ++s) {
    std::fill(receipts.begin(), receipts.end(), SegmentReceipt{});
    if (n > 1 && segments[s]->search_exact_batch(queries + first * dim, n, opts, merged.data(), receipts.data())) {
      for (size_t i = 0; i < n; ++i) results[first + i].segments[s] = receipts[i];
      continue;
    }
    for (size_t i = 0; i < n; ++i)
      segments[s]->search(queries + (first + i) * dim, opts, merged[i], results[first + i].segments[s]);
  }
  for (size_t i = 0; i < n; ++i) finish(segments.front()->metric(), merged[i], results[first + i]);
}

}  // namespace

SearchResult search_segments(const std::vector<std::shared_ptr<Segment>>& segments, const float* query,
                             const QueryOptions& opts) {
  std::vector<SearchResult> one(1);
  if (!segments.empty()) search_range(segments, query, 0, 1, opts, one);
  return std::move(one.front());
}

std::vector<SearchResult> search_batch(const std::vector<std::shared_ptr<Segment>>& segments, const float* queries,
                                       size_t nq, const QueryOptions& opts, unsigned threads) {
  std::vector<SearchResult> results(nq);
  if (nq == 0 || segments.empty()) return results;
  // Each thread takes a contiguous range of queries, so rows scanned for all are read once per
  // range; ranges of at most 64 queries keep a block's scores for every query cheap to hold.
  threads = std::max(1u, std::min<unsigned>(threads, unsigned(nq)));
  const size_t range = std::min<size_t>(64, (nq + threads - 1) / threads);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t first; (first = next.fetch_add(range)) < nq;)
      search_range(segments, queries, first, std::min(nq, first + range), opts, results);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return results;
}

}  // namespace sable
