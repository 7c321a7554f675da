// The default index: an IVF (ivf.h) trained two-level (cheaper than `ivf`'s flat k-means), SQ8
// residual codes scanned with integer dot products (one-bit codes, codes/bit_codes.h, in segments of
// 5,000 rows and more of 256 dimensions and more), and exact re-ranking. Beyond kGraphMinLists lists the nearest
// lists are found through a small HNSW graph over the centroids instead of a scan of their codes.
//
// Measured on 340k x 100 (cosine, single thread, recall@10 0.95): scanning the SQ8 codes of the
// centroids (a few hundred KB, cache resident) costs less per query than walking an HNSW graph
// over the float centroids at every list count tried (2.3k to 18.7k lists), so the graph only
// pays once the centroid codes no longer fit in cache, at segment sizes in the tens of millions.
#include <algorithm>
#include <cmath>
#include <memory>

#include "../io.h"
#include "hnsw.h"
#include "ivf.h"

#ifndef SABLE_BIT_CODES_MIN_ROWS
#define SABLE_BIT_CODES_MIN_ROWS 5000
#endif
#ifndef SABLE_GRAPH_MIN_LISTS
#define SABLE_GRAPH_MIN_LISTS 32768
#endif

namespace sable {

namespace {

// Lists per sqrt(n). 4 to 8 measured alike in QPS at 340k rows; 4 costs a third less to build.
// With bit codes a list costs less to scan than to rank among the centroids: 2 (synthetic 50k x
// 768: recall 0.964 at 18.1k QPS with 2, 0.965 at 13.7k with 4).
constexpr double kListsPerSqrtN = 4.0;
constexpr double kListsPerSqrtNBits = 2.0;
// From this many rows on, lists hold one-bit codes (bit_codes.h) instead of SQ8 codes. Measured on
// debian-minilm (384-d, one thread, best QPS at recall@10 0.95 / 0.99), bits against SQ8: 45k / 33k
// against 42k / 26k at 5,000 rows, 40k / 24k against 33k / 16k at 10,000 (the threshold was 20,000).
constexpr size_t kBitCodesMinRows = SABLE_BIT_CODES_MIN_ROWS;
// Below this dimension a code of 128 bits or less estimates too loosely: SQ8 scans faster
// (100-d GloVe: 12.8k against 7.2k QPS at recall 0.96).
constexpr size_t kBitCodesMinDim = 256;
// Training (see tune_training).
constexpr uint32_t kTwoLevelMinLists = 1024;
constexpr uint32_t kTrainPointsPerList = 64;
// From this many lists on, the coarse step walks the centroid graph.
constexpr uint32_t kGraphMinLists = SABLE_GRAPH_MIN_LISTS;
// Centroid graph: links and build beam.
constexpr uint32_t kGraphM = 16;
constexpr uint32_t kGraphEfConstruction = 128;

class SableIndex final : public IvfIndex {
 public:
  IndexType type() const override { return IndexType::Sable; }
  // Beam of the centroid graph search when SearchParams.beam_width is 0 (0 without a graph).
  uint32_t default_beam_width() const override { return graph_ ? beam_for(default_nprobe_, 0) : 0; }

 protected:
  uint32_t default_nlist(size_t n, size_t dim) const override {
    const double per = wants_bit_codes(n, dim) ? kListsPerSqrtNBits : kListsPerSqrtN;
    return uint32_t(std::lround(per * std::sqrt(double(n))));
  }

  // Two-level training on 64 points per list, no full refinement pass: the exact assignment of
  // every row that follows sets the list borders anyway. On 340k x 100 this cut the build from
  // 12.1 s to 4.3 s for a few percent of QPS at recall 0.95 (bench/results, the build column).
  void tune_training(size_t n, KMeansOptions& ko) const override {
    ko.two_level_min_k = kTwoLevelMinLists;
    ko.two_level_refine_iterations = 0;
    ko.max_points_per_centroid = std::min(ko.max_points_per_centroid, kTrainPointsPerList);
  }

  bool wants_bit_codes(size_t n, size_t dim) const override {
    return n >= kBitCodesMinRows && dim >= kBitCodesMinDim;
  }

  void on_centroids(const BuildOptions& opts, Reader* r) override {
    centroid_store_.reset();
    graph_.reset();
    const bool has_graph = nlist_ >= kGraphMinLists;
    if (r) {
      const uint8_t flag = r->u8();
      if (flag > 1 || bool(flag) != has_graph) throw Error(Code::snapshot_corrupt, "sable index snapshot: centroid graph flag");
    }
    if (!has_graph) return;
    // Same metric as the data: l2 centroids by l2, cosine and ip centroids (unit norm, spherical
    // k-means) by inner product, as the rows are compared.
    centroid_store_ = std::make_unique<VectorStore>(dim_, metric_);
    centroid_store_->append(centroids_.data(), nlist_);
    graph_ = std::make_unique<HnswIndex>();
    if (r) {
      graph_->load(*r, *centroid_store_);
      return;
    }
    BuildOptions go;
    go.m = kGraphM;
    go.ef_construction = kGraphEfConstruction;
    go.threads = opts.threads;
    go.seed = opts.seed;
    std::atomic<uint32_t> progress{0};
    graph_->build(*centroid_store_, go, progress);
  }

  void probe_lists(const float* q, uint32_t nprobe, const SearchParams& p, std::vector<Probe>& out,
                   SearchStats& stats) const override {
    if (!graph_) {
      select_lists(nprobe, out, stats);
      return;
    }
    TopK top(nprobe);
    SearchParams gp;
    gp.k = nprobe;
    gp.beam_width = beam_for(nprobe, p.beam_width);
    graph_->search(*centroid_store_, q, gp, top, stats);
    out.clear();
    for (const auto& e : top.take_sorted()) out.push_back({0.0f, e.label});
    fill_keys(out);
  }

  void save_coarse(Writer& w) const override {
    w.u8(graph_ ? 1 : 0);
    if (graph_) graph_->save(w);
  }
  size_t coarse_memory_bytes() const override {
    return (centroid_store_ ? centroid_store_->memory_bytes() : 0) + (graph_ ? graph_->memory_bytes() : 0);
  }

 private:
  // Beam = nprobe: wider beams bought almost no recall at a clear cost (measured 1x, 1.5x, 2.5x).
  static uint32_t beam_for(uint32_t nprobe, uint32_t requested) {
    return std::max<uint32_t>(requested ? requested : nprobe, nprobe);
  }

  std::unique_ptr<VectorStore> centroid_store_;
  std::unique_ptr<HnswIndex> graph_;
};

}  // namespace

std::unique_ptr<VectorIndex> make_sable_index() { return std::make_unique<SableIndex>(); }

}  // namespace sable
