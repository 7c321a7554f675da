// The default index: an IVF with many small lists whose centroids are searched through a small
// HNSW graph instead of by brute force, SQ8 residual codes and exact re-ranking. Everything but the
// coarse step is IvfIndex's.
#include <cmath>
#include <memory>

#include "hnsw.h"
#include "ivf.h"

namespace sable {

namespace {

// Lists per sqrt(n): the graph makes finding the nearest of many centroids cheap, and smaller
// lists mean fewer codes scanned for the same recall.
constexpr double kListsPerSqrtN = 8.0;
// Below this many lists brute force over the centroids beats walking a graph.
constexpr uint32_t kGraphMinLists = 256;
// Centroid graph: links and build beam.
constexpr uint32_t kGraphM = 16;
constexpr uint32_t kGraphEfConstruction = 128;

class SableIndex final : public IvfIndex {
 public:
  IndexType type() const override { return IndexType::Sable; }
  // Beam of the centroid search when SearchParams.beam_width is 0, for default_nprobe lists.
  uint32_t default_beam_width() const override { return beam_for(default_nprobe_, 0); }

 protected:
  uint32_t default_nlist(size_t n) const override { return uint32_t(std::lround(kListsPerSqrtN * std::sqrt(double(n)))); }
  uint32_t kmeans_points_per_centroid() const override { return 32; }

  void on_centroids(const BuildOptions& opts, Reader* r) override {
    // Same metric as the data: cosine centroids are unit (the store normalises them again, a
    // no-op), ip centroids are unit by spherical k-means and compared by inner product, as rows are.
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
    if (nlist_ < kGraphMinLists) {
      IvfIndex::probe_lists(q, nprobe, p, out, stats);
      return;
    }
    TopK top(nprobe);
    SearchParams gp;
    gp.k = nprobe;
    gp.beam_width = beam_for(nprobe, p.beam_width);
    graph_->search(*centroid_store_, q, gp, top, stats);
    out.clear();
    for (const auto& e : top.take_sorted()) out.push_back({e.distance, e.label});
  }

  void save_coarse(Writer& w) const override { graph_->save(w); }
  size_t coarse_memory_bytes() const override {
    return (centroid_store_ ? centroid_store_->memory_bytes() : 0) + (graph_ ? graph_->memory_bytes() : 0);
  }

 private:
  static uint32_t beam_for(uint32_t nprobe, uint32_t requested) {
    return requested ? std::max(requested, nprobe) : nprobe + std::max<uint32_t>(16, nprobe / 2);
  }

  std::unique_ptr<VectorStore> centroid_store_;
  std::unique_ptr<HnswIndex> graph_;
};

}  // namespace

std::unique_ptr<VectorIndex> make_sable_index() { return std::make_unique<SableIndex>(); }

}  // namespace sable
