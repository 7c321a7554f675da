// Row sets of a segment: filter matches, tombstones. One bit per row.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sable {

class Bitset {
 public:
  Bitset() = default;
  explicit Bitset(size_t n, bool value = false) { resize(n, value); }

  void resize(size_t n, bool value = false) {
    size_t old = n_;
    words_.resize((n + 63) / 64, value ? ~uint64_t{0} : 0);
    n_ = n;
    // Bits of the old last, partial word past `old` were cleared; give them `value`.
    for (size_t i = old; i < n && (i & 63); ++i) value ? set(i) : reset(i);
    clear_tail();
  }
  size_t size() const { return n_; }
  bool test(size_t i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  void set(size_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  void reset(size_t i) { words_[i >> 6] &= ~(uint64_t{1} << (i & 63)); }
  void set_all() {
    for (auto& w : words_) w = ~uint64_t{0};
    clear_tail();
  }
  size_t count() const {
    size_t c = 0;
    for (auto w : words_) c += std::popcount(w);
    return c;
  }
  void and_with(const Bitset& o) {
    for (size_t i = 0; i < words_.size() && i < o.words_.size(); ++i) words_[i] &= o.words_[i];
  }
  void and_not(const Bitset& o) {
    for (size_t i = 0; i < words_.size() && i < o.words_.size(); ++i) words_[i] &= ~o.words_[i];
  }
  // Calls f(row) for each set bit in ascending order.
  template <class F>
  void for_each(F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      uint64_t bits = words_[w];
      while (bits) {
        f(static_cast<uint32_t>(w * 64 + std::countr_zero(bits)));
        bits &= bits - 1;
      }
    }
  }
  const std::vector<uint64_t>& words() const { return words_; }
  std::vector<uint64_t>& words() { return words_; }

 private:
  void clear_tail() {
    if (n_ & 63) words_.back() &= (uint64_t{1} << (n_ & 63)) - 1;
  }
  std::vector<uint64_t> words_;
  size_t n_ = 0;
};

}  // namespace sable
