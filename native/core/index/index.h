// The one interface every index type implements. An index covers rows [0, n) of an immutable
// VectorStore (a sealed segment); the store outlives it. Per-query knobs travel in SearchParams,
// never on the shared index, so one index serves concurrent searches from many threads.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

#include "../bitset.h"
#include "../common.h"
#include "../topk.h"
#include "../codes/vector_store.h"

namespace sable {

class Reader;
class Writer;

struct BuildOptions {
  uint32_t nlist = 0;            // ivf/sable lists; 0: about 4 * sqrt(n)
  uint32_t m = 0;                // hnsw links per node; 0: 16
  uint32_t ef_construction = 0;  // hnsw build beam; 0: 200
  uint32_t threads = 0;          // 0: hardware concurrency
  uint64_t seed = 42;
};

struct SearchParams {
  uint32_t k = 10;
  uint32_t nprobe = 0;        // ivf/sable lists to scan; 0: the index default
  uint32_t beam_width = 0;    // hnsw ef (and sable's centroid beam); 0: the index default
  uint32_t rerank_depth = 0;  // ivf/sable candidates re-scored exactly; 0: the index default
  // The lists the caller asked for, before a filter widened them (0: nprobe): one-bit codes
  // re-score more widely when the caller asks past the default, not when a filter widens.
  uint32_t asked_nprobe = 0;
  const Bitset* allow = nullptr;  // rows that may be returned; null: every row
};

struct SearchStats {
  uint64_t candidates_scored = 0;  // distance evaluations (coarse, code and exact)
  uint32_t nprobe = 0;             // lists scanned (ivf/sable)
  uint32_t beam_width = 0;         // beam used (hnsw)
};

class VectorIndex {
 public:
  virtual ~VectorIndex() = default;
  virtual IndexType type() const = 0;
  // Builds over every row of `store`. `progress` goes 0..100. May use opts.threads threads.
  virtual void build(const VectorStore& store, const BuildOptions& opts, std::atomic<uint32_t>& progress) = 0;
  // `query` is prepared (store.prepare_query). Pushes (internal distance, row) of the nearest
  // allowed rows into `out` (out.k() of them when that many are allowed and reachable).
  // Thread-safe: const, no shared mutable state.
  virtual void search(const VectorStore& store, const float* query, const SearchParams& p, TopK& out,
                      SearchStats& stats) const = 0;
  virtual void save(Writer& w) const = 0;
  // Restores what save wrote; `store` is the segment's store, already loaded.
  virtual void load(Reader& r, const VectorStore& store) = 0;
  virtual size_t memory_bytes() const = 0;
  // This index over rows kept[0], kept[1], ... of its store only (ascending; they become rows 0,
  // 1, ... of `store`, a keep_rows copy), without training anything again; null when this type
  // cannot drop rows (the caller builds anew).
  virtual std::unique_ptr<VectorIndex> keep_rows(const std::vector<uint32_t>& kept, const VectorStore& store) const {
    return nullptr;
  }
  // This index over every row of `store`: its own rows first, as they are, then rows it has not
  // seen, added without training anything again; null when this type cannot add rows (the
  // caller builds anew). `store` is float32.
  virtual std::unique_ptr<VectorIndex> with_rows_appended(const VectorStore& store, const BuildOptions& opts) const {
    return nullptr;
  }
  // The centres of the lists rows are assigned to (nlist x dim), for a partition without an
  // index that borrows them (coarse_lists.h); empty for indexes without lists.
  virtual std::vector<float> list_centroids() const { return {}; }
  // Names those centroids as trained or loaded (list_rankings.h), for a partition that borrows
  // them: from then on this index's searches keep their rankings of the lists for it to take.
  // 0 for indexes without lists.
  virtual uint64_t lend_lists() const { return 0; }
  // Defaults of the per-query knobs, for receipts and the SLA tuner (0 where not applicable).
  virtual uint32_t default_nprobe() const { return 0; }
  virtual uint32_t nlist() const { return 0; }
  virtual uint32_t default_beam_width() const { return 0; }
  // The recall@10 an unfiltered search with `nprobe` lists (0: the default) is expected to reach,
  // from the build's calibration on the segment's own rows; -1 when the index has no estimate.
  virtual float estimated_recall(uint32_t nprobe) const { return -1.0f; }
  // Lists a build over n rows of `dim` floats makes when BuildOptions.nlist is 0 (0 for indexes
  // without lists): what the API reports as the nlist in effect before one is set.
  virtual uint32_t lists_for(size_t n, size_t dim) const { return 0; }
  // About how many distances an unfiltered search with these knobs evaluates, so the planner
  // can compare a filtered traversal with an exact scan of the matches.
  virtual double estimated_cost(uint32_t k, uint32_t nprobe, uint32_t beam_width, size_t rows) const {
    return double(rows);
  }
  // The same for a search whose filter allows `selectivity` of the rows, with the knobs it will
  // run with (nprobe already widened where the index widens it). A filtered graph traversal meets
  // about 1/selectivity times the nodes of an unfiltered one.
  virtual double estimated_filtered_cost(uint32_t k, uint32_t nprobe, uint32_t beam_width, size_t rows,
                                         double selectivity) const {
    return estimated_cost(k, nprobe, beam_width, rows) / selectivity;
  }
  // Whether a filtered search should scale nprobe by 1/selectivity: inverted lists pass only the
  // allowed share of what they hold; a filtered graph traversal already explores until it has
  // enough allowed results.
  virtual bool widens_nprobe_for_filters() const { return nlist() > 0; }
};

std::unique_ptr<VectorIndex> make_index(IndexType type);

// Exact scan of the allowed rows (every row when p.allow is null): the flat index, the growing
// partition and the planner's exact strategy all use it.
void exact_scan(const VectorStore& store, const float* query, const Bitset* allow, TopK& out, SearchStats& stats);

}  // namespace sable
