// Bounded collector of the k nearest (distance, label) pairs: a max-heap on distance.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace sable {

template <class Label>
class TopKOf {
 public:
  struct Entry {
    float distance;
    Label label;
    bool operator<(const Entry& o) const { return distance < o.distance || (distance == o.distance && label < o.label); }
  };

  explicit TopKOf(size_t k) : k_(k) { heap_.reserve(k + 1); }

  size_t k() const { return k_; }
  size_t size() const { return heap_.size(); }
  bool full() const { return heap_.size() >= k_; }
  // Distance a candidate must beat to enter; +inf until full.
  float threshold() const { return full() ? heap_.front().distance : std::numeric_limits<float>::infinity(); }

  void push(float distance, Label label) {
    if (k_ == 0) return;
    if (heap_.size() < k_) {
      heap_.push_back({distance, label});
      std::push_heap(heap_.begin(), heap_.end());
    } else if (Entry{distance, label} < heap_.front()) {
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.back() = {distance, label};
      std::push_heap(heap_.begin(), heap_.end());
    }
  }

  // A segment's candidate into the collector its search merges every segment's into. With
  // distinct on, a label held already keeps the nearer of its distances instead of a second
  // slot (QueryOptions::distinct).
  void merge_push(float distance, Label label) {
    if (distinct_) {
      for (auto& e : heap_) {
        if (e.label != label) continue;
        if (distance < e.distance) {
          e.distance = distance;
          std::make_heap(heap_.begin(), heap_.end());
        }
        return;
      }
    }
    push(distance, label);
  }
  void set_distinct(bool on) { distinct_ = on; }

  // Ascending by distance; leaves the collector empty.
  std::vector<Entry> take_sorted() {
    std::sort_heap(heap_.begin(), heap_.end());
    return std::move(heap_);
  }

 private:
  size_t k_;
  bool distinct_ = false;
  std::vector<Entry> heap_;
};

// Indexes report segment rows; the planner maps rows to external ids.
using TopK = TopKOf<uint32_t>;

}  // namespace sable
