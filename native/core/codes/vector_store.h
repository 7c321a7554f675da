// The vectors of one segment, row-major. Cosine rows are normalised on append so every index can
// score cosine as a negated dot product. Rows are float32 while the segment grows and is built;
// a `sable` segment then keeps them in half precision (to_f16) when that is harmless: unit rows
// (cosine), re-ranking distances then within about 1e-3 relative, far below the gaps between
// neighbours that recall@10 depends on; or rows that half precision holds exactly. Half the memory. Readers that need floats of any store use read_row; row() and data() are float32 only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../common.h"
#include "../kernels/kernels.h"

namespace sable {

class VectorStore {
 public:
  VectorStore(size_t dim, Metric metric) : dim_(dim), metric_(metric) {}

  size_t dim() const { return dim_; }
  Metric metric() const { return metric_; }
  size_t size() const { return dim_ ? (half_ ? halves_.size() : data_.size()) / dim_ : 0; }
  bool is_half() const { return half_; }
  // Float32 stores only (growing partitions, builds, hnsw and ivf segments).
  const float* row(uint32_t r) const { return data_.data() + size_t(r) * dim_; }
  const float* data() const { return data_.data(); }
  const uint16_t* halves() const { return halves_.data(); }
  // Row r as floats, whatever the store keeps.
  void read_row(uint32_t r, float* out) const;
  // Row r as a build reads it: a float row as it is; a half row widened into `scratch` (dim
  // floats), cosine rows normalised again as to_f32 does. So a build over a half store reads the
  // rows a widened store would hold, without holding them all twice.
  const float* float_row(uint32_t r, float* scratch) const;
  // The same row always written into `out`.
  void read_float_row(uint32_t r, float* out) const;
  // Where row r starts and how long it is (prefetching).
  const void* row_address(uint32_t r) const {
    return half_ ? static_cast<const void*>(halves_.data() + size_t(r) * dim_) : static_cast<const void*>(row(r));
  }
  size_t row_bytes() const { return dim_ * (half_ ? sizeof(uint16_t) : sizeof(float)); }
  // Room for `rows` rows. An empty store reserves at its first row, in the precision that row
  // sets (a merge of half rows would otherwise reserve twice the address space in floats).
  void reserve(size_t rows) {
    if (size() == 0) reserved_rows_ = rows;
    else if (half_) halves_.reserve(rows * dim_);
    else data_.reserve(rows * dim_);
  }
  // Drops spare capacity once no more rows come (a sealed segment): growth left up to 2x.
  void shrink_to_fit() {
    data_.shrink_to_fit();
    halves_.shrink_to_fit();
    inv_norms_.shrink_to_fit();
  }
  // Float32 stores only.
  void append(const float* rows, size_t n);
  // Appends row r of `src` (same shape) as it is held there: an empty store takes half
  // precision from a half source (no widening, no second rounding); a half store meeting a
  // float row widens first, as only every row in half precision keeps the store half.
  void append_row_of(const VectorStore& src, uint32_t r);
  // Rows to half precision, the float32 copy freed; and back (before another build).
  void to_f16();
  // Whether every value survives half precision unchanged (small integers, e.g. pixels).
  bool fits_f16_exactly() const;
  void to_f32();
  // Replaces the contents (snapshot load).
  void assign(std::vector<float>&& data) {
    data_ = std::move(data);
    halves_.clear();
    inv_norms_.clear();
    half_ = false;
  }
  // `inv_norms`: those of the halves (inverse_norms_of), computed here when not given.
  void assign_halves(std::vector<uint16_t>&& halves, std::vector<float>&& inv_norms = {});
  // The float rows in half precision, and what a cosine half store keeps beside them: the store
  // unchanged (a sealed segment narrows them without its lock, then swaps them in).
  std::vector<uint16_t> narrowed() const;
  std::vector<float> inverse_norms_of(const std::vector<uint16_t>& halves) const;
  // A store of rows kept[0], kept[1], ... of this one, in the same precision (no rounding again).
  VectorStore keep_rows(const std::vector<uint32_t>& kept) const;
  // Rows held, not capacity: a growing store reserves its rows up front as address space, which
  // costs no memory until rows arrive (sealed stores are shrunk to fit).
  size_t memory_bytes() const {
    return data_.size() * sizeof(float) + halves_.size() * sizeof(uint16_t) + inv_norms_.size() * sizeof(float);
  }

  // Copies `q` into `out` in the form indexes expect (normalised for cosine).
  void prepare_query(const float* q, float* out) const;
  // Internal distance between a prepared query and row r.
  float distance(const float* prepared_query, uint32_t r) const {
    if (half_) {
      const KernelTable& k = active_kernels();
      const uint16_t* h = halves_.data() + size_t(r) * dim_;
      if (metric_ == Metric::L2) return k.l2sq_f16(prepared_query, h, dim_);
      const float dot = k.ip_f16(prepared_query, h, dim_);
      return metric_ == Metric::Cosine ? -dot * inv_norms_[r] : -dot;
    }
    return distance(prepared_query, row(r));
  }
  float distance(const float* a, const float* b) const {
    const KernelTable& k = active_kernels();
    return metric_ == Metric::L2 ? k.l2sq_f32(a, b, dim_) : -k.ip_f32(a, b, dim_);
  }

 private:
  size_t dim_;
  Metric metric_;
  std::vector<float> data_;
  std::vector<uint16_t> halves_;
  // Cosine half rows: 1 / the rounded row's norm, so a row scores exactly as the unit vector its
  // halves spell (an identical query gets 0, never slightly below).
  std::vector<float> inv_norms_;
  bool half_ = false;
  // Rows an empty store was asked to make room for (see reserve).
  size_t reserved_rows_ = 0;
  void take_reservation();
};

// Scales v to unit L2 norm in place (no-op for a zero vector).
void normalize(float* v, size_t d);

}  // namespace sable
