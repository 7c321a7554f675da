#include "list_rankings.h"

#include <array>
#include <atomic>
#include <cstring>

namespace sable {

namespace {

struct Ranking {
  uint64_t lists_id = 0;
  std::vector<float> query;
  std::vector<uint32_t> lists;
};

// The batcher splits batches from 16 queries on: a batch's queries all fit.
constexpr size_t kKept = 16;

struct Recent {
  std::array<Ranking, kKept> slots;
  size_t next = 0;
};

Recent& recent() {
  thread_local Recent r;
  return r;
}

}  // namespace

uint64_t new_lists_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

std::vector<uint32_t>& remember_ranking(uint64_t lists_id, const float* query, size_t dim) {
  Recent& r = recent();
  Ranking& slot = r.slots[r.next];
  r.next = (r.next + 1) % kKept;
  slot.lists_id = lists_id;
  slot.query.assign(query, query + dim);
  slot.lists.clear();
  return slot.lists;
}

const std::vector<uint32_t>* recall_ranking(uint64_t lists_id, const float* query, size_t dim, uint32_t need) {
  if (lists_id == 0) return nullptr;
  Recent& r = recent();
  // Newest first: a widened search's ranking supersedes the first one.
  for (size_t i = 1; i <= kKept; ++i) {
    const Ranking& slot = r.slots[(r.next + kKept - i) % kKept];
    if (slot.lists_id != lists_id || slot.lists.size() < need || slot.query.size() != dim) continue;
    if (std::memcmp(slot.query.data(), query, dim * sizeof(float)) == 0) return &slot.lists;
  }
  return nullptr;
}

}  // namespace sable
