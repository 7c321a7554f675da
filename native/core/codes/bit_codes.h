// One-bit codes of IVF residuals with an error bound, after RaBitQ (Gao & Long, SIGMOD 2024).
//
// A row x of list l (centroid c) is stored as the signs of its rotated, normalised residual
// o = P (x - c) / |x - c|, P a random orthogonal map into D dimensions (D the power of two at or
// above dim, at least 64): D / 64 64-bit words a row instead of dim bytes of SQ8. With xbar = (2 bits - 1) / sqrt(D) (D = words * 64), <xbar, P v> / <xbar, o>
// estimates <o, P v> = <x - c, v> / |x - c| for any vector v without bias, within
// |x - c| |v| sqrt(1 - <xbar, o>^2) / (<xbar, o> sqrt(D - 1)) times a small constant with high
// probability (the paper's Theorem 3.2).
//
// v is the query minus the data's mean (one rotation and one 4-bit quantisation per query, not
// per list), so a row's internal distance is
//   ip/cosine: -<q, c> - <mean, x - c>                - <q - mean, x - c>
//   l2:        |q|^2 - 2 <q, c> + |x|^2 - 2 <mean, x - c> - 2 <q - mean, x - c>
// the first term per list, the next per row (`offset`), the last estimated.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../common.h"

namespace sable {

class Reader;
class Writer;

class BitCodes {
 public:
  // The query side: the rotated query minus the mean, quantised to 4 bits a coordinate as
  // lo + step * u (u in 0..15), held as four bit planes.
  struct Query {
    std::vector<float> rotated;   // D floats
    std::vector<uint64_t> planes; // 4 x words
    float lo = 0, step = 0;
    float sum_u = 0;              // sum of u over the D coordinates
    float norm = 0;               // |q - mean|
  };

  BitCodes() = default;

  // Draws the rotation (seeded) and takes the data's mean; codes are added with encode.
  void init(size_t dim, Metric metric, const float* mean, uint64_t seed, size_t rows);
  size_t words() const { return words_; }
  // D, the bits of a code, for rows of `dim` floats.
  static size_t code_bits(size_t dim);
  size_t rows() const { return slope_.size(); }
  const uint64_t* codes(size_t pos) const { return bits_.data() + pos * words_; }
  // Encodes row `pos`: x and its list's centroid c.
  void encode(size_t pos, const float* x, const float* c);

  void prepare(const float* q, Query& out) const;
  // For `count` rows (positions first + (sel ? sel[i] : i)): the lower end of each row's distance,
  // base (the list's term) + the estimate - confidence x the error bound. dots: count scratch words.
  void lower_bounds(const Query& q, size_t first, const uint32_t* sel, size_t count, uint32_t* dots, float base,
                    float confidence, float* lower) const;

  // Codes laid out anew, same rotation and mean: position i holds this one's position from[i], or
  // nothing (to be encode()d) where from[i] is kUnfilled. Dropping or adding rows moves codes
  // without re-encoding them: each depends only on its row and its list's centroid.
  static constexpr uint32_t kUnfilled = UINT32_MAX;
  BitCodes gather(const std::vector<uint32_t>& from) const;

  void save(Writer& w) const;
  // Throws snapshot_corrupt unless what it reads fits `dim` and `rows`.
  void load(Reader& r, size_t dim, Metric metric, size_t rows);
  size_t memory_bytes() const;

 private:
  void rotate(const float* v, float* out) const;

  size_t dim_ = 0, words_ = 0;
  Metric metric_ = Metric::L2;
  std::vector<float> signs_flip_;  // the rotation's random signs: rounds x D of +1 / -1
  std::vector<float> mean_;      // dim
  std::vector<uint64_t> bits_;   // rows x words
  // Per row: slope = mult |x - c| / (<xbar, o> sqrt(D)) (mult 2 for l2, else 1), slope x
  // (2 popcount - D), the offset, and the error bound's factor.
  std::vector<float> slope_, lo_slope_, offset_, error_;
};

}  // namespace sable
