// Inverted file index: k-means lists holding row ids and SQ8 codes of the residuals
// (row - list centroid), contiguous per list. A query finds its nearest lists, scans their codes
// for the best `rerank_depth` candidates and re-scores those exactly from the VectorStore.
//
// The coarse step (which lists to scan) is virtual: `ivf` ranks every centroid by brute force,
// `sable` (sable.cpp) searches its many centroids through a small HNSW graph and reuses all the
// rest: build, list layout, scanning, re-ranking, tuning, snapshots.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "../sq8.h"
#include "index.h"
#include "kmeans.h"

namespace sable {

class IvfIndex : public VectorIndex {
 public:
  IndexType type() const override { return IndexType::Ivf; }
  void build(const VectorStore& store, const BuildOptions& opts, std::atomic<uint32_t>& progress) override;
  void search(const VectorStore& store, const float* query, const SearchParams& p, TopK& out,
              SearchStats& stats) const override;
  void save(Writer& w) const override;
  void load(Reader& r, const VectorStore& store) override;
  size_t memory_bytes() const override;
  // Chosen at build: the fewest lists for which held-out rows of the segment find 95% of their
  // exact 10 nearest neighbours (see tune_default_nprobe).
  uint32_t default_nprobe() const override { return default_nprobe_; }
  // Lists actually held (empty k-means clusters are dropped, so it can be below the requested nlist).
  uint32_t nlist() const override { return nlist_; }
  // Candidates re-scored exactly when SearchParams.rerank_depth is 0.
  static uint32_t default_rerank_depth(uint32_t k);

 protected:
  struct Probe {
    float distance;
    uint32_t list;
  };

  // Lists built when BuildOptions.nlist is 0.
  virtual uint32_t default_nlist(size_t n) const;
  // K-means training sample per centroid.
  virtual uint32_t kmeans_points_per_centroid() const { return 64; }
  // Called when the centroids are final, in build (before tuning) and in load: sable builds or
  // loads its centroid graph here. `r` is null in build.
  virtual void on_centroids(const BuildOptions& opts, Reader* r) {}
  // Up to `nprobe` nearest lists to `query`, ascending by distance, into `out` (cleared first).
  // Counts the centroid distances it evaluates in stats. Default: brute force.
  virtual void probe_lists(const float* query, uint32_t nprobe, const SearchParams& p, std::vector<Probe>& out,
                           SearchStats& stats) const;
  virtual void save_coarse(Writer& w) const {}
  virtual size_t coarse_memory_bytes() const { return 0; }

  // Every list ranked by brute force over the centroids, ascending.
  void rank_all_lists(const float* query, std::vector<Probe>& out, SearchStats& stats) const;
  // Internal distance between a prepared query and centroid c.
  float centroid_distance(const float* query, uint32_t c) const;
  const float* centroid(uint32_t c) const { return centroids_.data() + size_t(c) * dim_; }

  size_t dim_ = 0;
  Metric metric_ = Metric::L2;
  uint32_t nlist_ = 0;
  uint32_t default_nprobe_ = 1;
  bool residual_ = true;          // codes quantise row - centroid (else the row itself)
  std::vector<float> centroids_;  // nlist x dim; unit norm for ip and cosine (spherical k-means)
  std::vector<uint32_t> offsets_; // nlist + 1: list i holds positions [offsets_[i], offsets_[i+1])
  std::vector<uint32_t> ids_;     // row of each position
  std::vector<uint8_t> codes_;    // dim bytes per position
  Sq8 sq8_;

 private:
  void assign_and_encode(const VectorStore& store, const BuildOptions& opts, std::atomic<uint32_t>& progress);
  void tune_default_nprobe(const VectorStore& store, const BuildOptions& opts);
  // Scans list `l` into `cand`, codes of allowed rows only; returns the codes scored.
  size_t scan_list(uint32_t l, const float* query, const Bitset* allow, TopK& cand, float* scratch) const;
};

}  // namespace sable
