// Inverted file index: k-means lists holding row ids and SQ8 codes of the residuals
// (row - list centroid), contiguous per list, or one-bit codes of them (codes/bit_codes.h; `sable`
// segments past a size: each scanned row re-scored exactly when its estimate's lower bound
// could enter the top k). A query ranks the lists by brute force over the
// centroids' own SQ8 codes, scans the nearest `nprobe` lists' codes for the best `rerank_depth`
// candidates (rows allowed by the filter only) and re-scores those exactly from the VectorStore.
// Code distances are one u8 x float (or, with AVX-512 VNNI, u8 x int8) dot product per code
// plus per-list and per-code constants; see "Code scoring" in ivf.cpp.
//
// The coarse step is virtual: `sable` (sable.cpp) builds more lists and, past a size where that
// pays, walks an HNSW graph over the centroids instead; everything else (build, list layout,
// scanning, re-ranking, tuning, snapshots) is this class's.
//
// Build: k-means (kmeans.h) on up to 256 rows per centroid within a cost budget, rows assigned
// to the nearest (SQ8-decoded) centroid, empty lists dropped, SQ8 trained on residuals, then
// default_nprobe tuned on held-out rows. Searches are const and thread-safe (per-thread scratch).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "../codes/bit_codes.h"
#include "../codes/sq8.h"
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
  // The lists without the dropped rows, the centroids, quantizers and calibration as built (the
  // rows left are rows the centroids were trained on). Null below one row a list.
  std::unique_ptr<VectorIndex> keep_rows(const std::vector<uint32_t>& kept, const VectorStore& store) const override;
  // The rows past those the lists hold, each assigned to its nearest list and encoded with the
  // quantizers as trained; the default nprobe calibrated again over all rows once they are a
  // quarter more than it was calibrated on.
  std::unique_ptr<VectorIndex> with_rows_appended(const VectorStore& store, const BuildOptions& opts) const override;
  // Chosen at build: the fewest lists for which 500 rows of the segment, as held-out queries, find
  // 96.2% of their exact 10 nearest other rows (see tune_default_nprobe in ivf.cpp).
  uint32_t default_nprobe() const override { return default_nprobe_; }
  std::vector<float> list_centroids() const override { return centroids_; }
  uint64_t lend_lists() const override {
    lent_.store(true, std::memory_order_relaxed);
    return lists_id_;
  }
  uint32_t lists_for(size_t n, size_t dim) const override {
    return n ? uint32_t(std::clamp<size_t>(default_nlist(n, dim), 1, n)) : 0;
  }
  // Lists actually held (empty k-means clusters are dropped, so it can be below the requested nlist).
  uint32_t nlist() const override { return nlist_; }
  float estimated_recall(uint32_t nprobe) const override;
  // Candidates re-scored exactly when SearchParams.rerank_depth is 0.
  static uint32_t default_rerank_depth(uint32_t k);
  // In units of one exact f32 distance: an SQ8 code costs about a third of one (a bit code a
  // twenty-fifth: 4-5 ns against about 160 ns a row for the exact scan of a filter's matches,
  // 384-d), ranking a list about a quarter (SQ8 centroids), plus the exact re-scoring.
  double estimated_cost(uint32_t k, uint32_t nprobe, uint32_t, size_t rows) const override {
    return list_scan_cost(k, nprobe, rows, code_cost());
  }
  // The widened lists' rows each cost a test of the filter's bit; only the allowed share is
  // scored. (Dividing the widened cost by the selectivity again sent a 10 % filter on a 120k-row
  // text partition to an exact scan of its 12k matches.)
  double estimated_filtered_cost(uint32_t k, uint32_t nprobe, uint32_t, size_t rows, double selectivity) const override {
    return list_scan_cost(k, nprobe, rows, selectivity * code_cost() + kFilterTestCost);
  }

  // One filter bit tested per row of a scanned list, in exact distances (about 1-2 ns).
  static constexpr double kFilterTestCost = 0.01;

 protected:
  double code_cost() const { return bit_codes_ ? 0.04 : 0.35; }
  // Ranking the lists, scanning nprobe of them at `per_row` a row, re-scoring the candidates.
  double list_scan_cost(uint32_t k, uint32_t nprobe, size_t rows, double per_row) const {
    double lists = nlist_ ? double(std::min(nprobe ? nprobe : default_nprobe_, nlist_)) / nlist_ : 1.0;
    return lists * double(rows) * per_row + nlist_ * 0.25 + default_rerank_depth(k);
  }

  struct Probe {
    float key;  // coarse key of the list (see coarse_keys); ranks lists like the distance to them
    uint32_t list;
  };

  // Lists built when BuildOptions.nlist is 0.
  virtual uint32_t default_nlist(size_t n, size_t dim) const;
  // Adjusts the coarse quantizer's training (sample, two-level split) after the defaults are set.
  virtual void tune_training(size_t n, KMeansOptions& ko) const {}
  // Called when the centroids are final, in build (before tuning) and in load: sable builds or
  // loads its centroid graph here. `r` is null in build.
  virtual void on_centroids(const BuildOptions& opts, Reader* r) {}
  // Up to `nprobe` nearest lists to `query`, nearest first, with their keys, into `out`. Counts
  // the centroid distances it evaluates in stats. Called from search() on the searching thread,
  // after the query's coarse weights are prepared. Default: select_lists (brute force).
  // Keeps the lists a search ranked for a partition borrowing them to find (list_rankings.h).
  void lend_ranking(const float* query, const std::vector<Probe>& probes) const;
  virtual void probe_lists(const float* query, uint32_t nprobe, const SearchParams& p, std::vector<Probe>& out,
                           SearchStats& stats) const;
  // Brute force over the centroids' SQ8 codes (a few bytes per list, cache resident): the m lists
  // of smallest key, ascending.
  void select_lists(uint32_t m, std::vector<Probe>& out, SearchStats& stats) const;
  // Sets Probe.key of the given lists (for a coarse step that ranks lists another way).
  void fill_keys(std::vector<Probe>& probes) const;
  // Whether a build over n rows of `dim` floats stores one-bit codes (bit_codes.h) instead of SQ8.
  virtual bool wants_bit_codes(size_t n, size_t dim) const { return false; }
  virtual void save_coarse(Writer& w) const {}
  virtual size_t coarse_memory_bytes() const { return 0; }

  const float* centroid(uint32_t c) const { return centroids_.data() + size_t(c) * dim_; }

  size_t dim_ = 0;
  Metric metric_ = Metric::L2;
  uint32_t nlist_ = 0;
  uint32_t default_nprobe_ = 1;
  bool residual_ = true;          // codes quantise row - centroid (else the row itself)
  // nlist x dim: the lists' centers, k-means centroids (unit norm for ip and cosine: spherical
  // k-means) as decoded from their SQ8 codes, so the coarse search on codes is exact about them.
  std::vector<float> centroids_;
  // Set with the centroids (build, load); copies that keep them keep it.
  uint64_t lists_id_ = 0;
  // Whether a partition borrows the lists: until then searches keep no ranking (a copy of the
  // prepared query per search, for nobody).
  mutable std::atomic<bool> lent_{false};
  std::vector<uint32_t> offsets_; // nlist + 1: list i holds positions [offsets_[i], offsets_[i+1])
  std::vector<uint32_t> ids_;     // row of each position
  size_t stride_ = 0;             // bytes per code: dim rounded up to 4, zero padded
  std::vector<uint8_t> codes_;    // stride_ bytes per position, then kCodeTail spare bytes
  std::vector<float> bias_;       // l2 only, per code: ||r||^2 + 2 <c, r> for its decoded residual r, centroid c
  Sq8 sq8_;
  // The centroids as SQ8 codes (their own quantizer): what the coarse search reads.
  Sq8 centroid_sq8_;
  std::vector<uint8_t> centroid_codes_;  // stride_ bytes per list, then kCodeTail spare bytes
  std::vector<float> centroid_bias_;     // l2 only: ||c||^2 per list
  // One-bit codes in place of codes_/bias_/sq8_ (when wants_bit_codes): a scanned row is
  // re-scored exactly as soon as its estimate's lower bound could enter the top k.
  bool bit_codes_ = false;
  BitCodes bits_;
  // The calibration's measurements: recall@10 of the held-out rows at each nprobe tried, by nprobe.
  std::vector<std::pair<uint32_t, float>> recall_curve_;
  // Rows the calibration measured (0: not known, as after a snapshot's load); an extension
  // measures again past kRecalibrateGrowth times as many.
  size_t calibrated_rows_ = 0;
  static constexpr double kRecalibrateGrowth = 1.25;

 private:
  // A copy of what training made (centroids, quantizers, calibration), without lists or codes.
  std::unique_ptr<IvfIndex> trained_copy() const;
  // out's codes: position i holds this index's position from[i] (BitCodes::kUnfilled: none yet).
  void lay_out_codes(IvfIndex& out, const std::vector<uint32_t>& from) const;
  // Encodes row x into position `pos` of list `list` (scratch: dim floats).
  void encode_position(uint32_t pos, const float* x, uint32_t list, float* scratch);
  void assign_and_encode(const VectorStore& store, const BuildOptions& opts, std::atomic<uint32_t>& progress);
  void tune_default_nprobe(const VectorStore& store, const BuildOptions& opts);
  struct Scratch;
  static Scratch& scratch();
  // The m smallest keys (ties to the lower index), ascending, into out.
  static void select_smallest(const std::vector<float>& keys, uint32_t m, Scratch& s, std::vector<Probe>& out);
  void quantize_centroids();
  void centroid_norms();
  // Keys (see Probe) of `count` lists: lists[i], or first + i when lists is null.
  void coarse_keys(const uint32_t* lists, uint32_t first, size_t count, float* keys) const;
  // Scans list `l` into the scratch's candidates, codes of allowed rows only; returns the codes
  // scored.
  size_t scan_list(const Probe& list, const Bitset* allow, Scratch& s) const;
  // The search over bit codes; scan_list_bits scans one list into `out` (exact distances) and
  // returns the codes estimated and the rows re-scored.
  void search_bits(const VectorStore& store, const float* query, const SearchParams& p, TopK& out,
                   SearchStats& stats) const;
  std::pair<size_t, size_t> scan_list_bits(const VectorStore& store, const float* query, const Probe& list,
                                           const Bitset* allow, float confidence, Scratch& s, TopK& out) const;
  // Error bounds of slack in the bit-code scan for a caller who asked for `asked_nprobe` lists.
  float bound_confidence(uint32_t asked_nprobe) const;
  void encode_bits(const VectorStore& store, const BuildOptions& opts, const std::vector<uint32_t>& list_of);
  template <class Enough, class Scan>
  void scan_more_lists(Scratch& s, SearchStats& stats, Enough enough, Scan scan) const;
};

}  // namespace sable
