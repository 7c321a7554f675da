// HNSW graph index (Malkov & Yashunin), laid out as hnswlib lays it out: level-0 links in one flat
// array (per node: count, then M0 = 2*M neighbour ids), upper levels in one pool of per-node link
// blocks (per node and level >= 1: count, then M ids). Node ids are store rows; the vectors are
// never copied, every distance reads the VectorStore passed to build/search.
//
// Besides the product's `hnsw` index type, the `sable` index reuses this class to route queries
// over its IVF centroids (build over a store of centroids, search with a beam width).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "index.h"

namespace sable {

class HnswIndex final : public VectorIndex {
 public:
  static constexpr uint32_t kDefaultM = 16;
  static constexpr uint32_t kDefaultEfConstruction = 200;
  static constexpr uint32_t kDefaultBeamWidth = 64;
  static constexpr uint32_t kMaxM = 1024;

  IndexType type() const override { return IndexType::Hnsw; }
  // Parallel insertion (opts.threads threads, per-node locks). Levels are drawn up front from
  // opts.seed, so with one thread the graph is bit-identical for a given seed and store.
  void build(const VectorStore& store, const BuildOptions& opts, std::atomic<uint32_t>& progress) override;
  // Greedy descent on the upper levels, then a beam of ef = max(beam_width or 64, k) at level 0.
  // With p.allow, the graph is traversed through every node but only allowed rows are returned.
  void search(const VectorStore& store, const float* query, const SearchParams& p, TopK& out,
              SearchStats& stats) const override;
  void save(Writer& w) const override;
  // Throws Error(Code::snapshot_corrupt) on anything inconsistent with `store` or with itself.
  void load(Reader& r, const VectorStore& store) override;
  size_t memory_bytes() const override;
  uint32_t default_beam_width() const override { return kDefaultBeamWidth; }
  // Measured: a level-0 beam of ef evaluates about 14 * ef distances at M = 16 (it scales with M).
  double estimated_cost(uint32_t k, uint32_t, uint32_t beam_width, size_t) const override {
    double ef = std::max(beam_width ? beam_width : kDefaultBeamWidth, k);
    return ef * (m_ ? m_ : kDefaultM) * 0.875;
  }

  // Introspection, for tests and diagnostics.
  size_t size() const { return n_; }
  uint32_t m() const { return m_; }
  uint32_t ef_construction() const { return efc_; }
  int max_level() const { return max_level_; }  // -1 when empty
  uint32_t entry_point() const { return entry_; }
  int level_of(uint32_t node) const { return levels_[node]; }
  // Links of `node` at `level` (<= level_of(node)): pointer to the count, followed by the ids.
  const uint32_t* links(uint32_t node, int level) const { return level == 0 ? links0(node) : links_upper(node, level); }

 private:
  struct Builder;
  struct Scratch;

  const uint32_t* links0(uint32_t v) const { return level0_.data() + size_t(v) * (m0_ + 1); }
  const uint32_t* links_upper(uint32_t v, int level) const {
    return upper_.data() + (size_t(upper_first_[v]) + size_t(level - 1)) * (m_ + 1);
  }
  void clear();
  void layout_upper();  // upper_first_ from levels_, and a zeroed upper_ pool of the matching size

  uint32_t m_ = 0, m0_ = 0, efc_ = 0;
  uint32_t n_ = 0, dim_ = 0;
  uint32_t entry_ = 0;
  int32_t max_level_ = -1;
  std::vector<uint32_t> level0_;       // n * (m0 + 1)
  std::vector<uint8_t> levels_;        // n
  std::vector<uint32_t> upper_first_;  // n: index (in blocks of m + 1) of the node's level-1 block
  std::vector<uint32_t> upper_;        // sum(levels) * (m + 1)
};

std::unique_ptr<VectorIndex> make_hnsw_index();

}  // namespace sable
