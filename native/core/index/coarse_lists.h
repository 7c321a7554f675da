// The rows of a partition without an index (the growing one, a frozen one waiting for its build)
// grouped by the nearest list of another partition's IVF index, whose centroids are copied here:
// a search scans the rows of the lists nearest its query, not every row. Under the soak's writes
// a growing partition of ~20k 768-d rows was scanned whole by every search task: 41 % of the
// search threads' time, against 1.7k candidates for the 100k indexed rows beside it.
//
// Rows are assigned by the searches that meet them unassigned (a chunk at a time, by one search
// at a time), never by the writer: appends cost nothing more, and a partition nobody searches
// (a bulk load's) pays nothing. Rows not yet assigned are scanned exactly.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "../bitset.h"
#include "../codes/vector_store.h"
#include "../topk.h"
#include "kmeans.h"

namespace sable {

class CoarseLists {
 public:
  // `centroids`: nlist x dim, from an index over the same metric, and their `lists_id`;
  // `nprobe`: the lists a search scans by default; `recall`: the source index's calibrated recall
  // at its own default.
  CoarseLists(std::vector<float> centroids, uint64_t lists_id, size_t dim, Metric metric, uint32_t nprobe, float recall);

  uint32_t nlist() const { return nlist_; }
  uint32_t default_nprobe() const { return nprobe_; }
  float estimated_recall() const { return recall_; }
  size_t memory_bytes() const;

  // Assigns up to kAssignChunk rows past those assigned, when no other search is assigning. The
  // caller holds its segment's lock shared: rows below `rows` stay as they are meanwhile.
  void catch_up(const VectorStore& store, uint32_t rows);

  // The best allowed rows among the `nprobe` lists nearest `prepared` (a prepared query) and the
  // rows [assigned, rows) not yet in a list; returns the rows scored, and the centroids when it
  // ranked them itself. The source index's ranking of the same query, when this thread's search
  // of it just made one (list_rankings.h), stands in for ranking them.
  size_t search(const VectorStore& store, const float* prepared, uint32_t nprobe, const Bitset* allow, uint32_t rows,
                TopK& out) const;

  // Rows assigned per catch_up: 1024 x 768-d against 632 lists is about 0.5 GMAC, a few ms of
  // the search that does it.
  static constexpr uint32_t kAssignChunk = 1024;

 private:
  size_t dim_;
  KMeansMode mode_;
  uint32_t nlist_;
  uint32_t nprobe_;
  float recall_;
  std::vector<float> centroids_;
  uint64_t lists_id_;
  mutable std::shared_mutex lists_mu_;
  std::vector<std::vector<uint32_t>> lists_;
  std::atomic<uint32_t> assigned_{0};
  std::mutex assigning_;
};

}  // namespace sable
