#include "multi_search.h"

#include <atomic>
#include <thread>

namespace sable {

SearchResult search_segments(const std::vector<std::shared_ptr<Segment>>& segments, const float* query,
                             const QueryOptions& opts) {
  SearchResult result;
  if (segments.empty()) return result;
  TopKOf<int64_t> merged(opts.k);
  result.segments.resize(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) segments[i]->search(query, opts, merged, result.segments[i]);
  Metric metric = segments.front()->metric();
  auto sorted = merged.take_sorted();
  result.ids.reserve(sorted.size());
  result.scores.reserve(sorted.size());
  for (const auto& e : sorted) {
    result.ids.push_back(e.label);
    result.scores.push_back(score_from_distance(metric, e.distance));
  }
  return result;
}

std::vector<SearchResult> search_batch(const std::vector<std::shared_ptr<Segment>>& segments, const float* queries,
                                       size_t nq, const QueryOptions& opts, unsigned threads) {
  std::vector<SearchResult> results(nq);
  if (nq == 0) return results;
  size_t dim = segments.empty() ? 0 : segments.front()->dim();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < nq;) results[i] = search_segments(segments, queries + i * dim, opts);
  };
  threads = std::max(1u, std::min<unsigned>(threads, unsigned(nq)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return results;
}

}  // namespace sable
