#include "id_table.h"

namespace sable {

size_t IdTable::home(int64_t id) const {
  // A 64-bit mix (splitmix64's finaliser): ids are often dense integers, which would cluster.
  uint64_t x = uint64_t(id);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return size_t(x) & (slots_.size() - 1);
}

uint32_t IdTable::find(int64_t id, const std::vector<int64_t>& ids) const {
  if (size_ == 0) return kAbsent;
  const size_t mask = slots_.size() - 1;
  for (size_t s = home(id);; s = (s + 1) & mask) {
    const uint32_t row = slots_[s];
    if (row == kAbsent) return kAbsent;
    if (ids[row] == id) return row;
  }
}

void IdTable::grow(const std::vector<int64_t>& ids) {
  std::vector<uint32_t> old = std::move(slots_);
  slots_.assign(old.empty() ? 16 : old.size() * 2, kAbsent);
  const size_t mask = slots_.size() - 1;
  for (uint32_t row : old) {
    if (row == kAbsent) continue;
    size_t s = home(ids[row]);
    while (slots_[s] != kAbsent) s = (s + 1) & mask;
    slots_[s] = row;
  }
}

void IdTable::insert(int64_t id, uint32_t row, const std::vector<int64_t>& ids) {
  // Load factor at most 3/4 keeps linear probes short.
  if ((size_ + 1) * 4 > slots_.size() * 3) grow(ids);
  const size_t mask = slots_.size() - 1;
  size_t s = home(id);
  while (slots_[s] != kAbsent) s = (s + 1) & mask;
  slots_[s] = row;
  ++size_;
}

uint32_t IdTable::erase(int64_t id, const std::vector<int64_t>& ids) {
  if (size_ == 0) return kAbsent;
  const size_t mask = slots_.size() - 1;
  size_t s = home(id);
  for (;; s = (s + 1) & mask) {
    if (slots_[s] == kAbsent) return kAbsent;
    if (ids[slots_[s]] == id) break;
  }
  const uint32_t row = slots_[s];
  // Backward-shift deletion: move later members of the cluster into the hole when their home
  // slot does not lie cyclically in (hole, position].
  size_t hole = s;
  for (size_t j = (s + 1) & mask; slots_[j] != kAbsent; j = (j + 1) & mask) {
    const size_t h = home(ids[slots_[j]]);
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = kAbsent;
  --size_;
  return row;
}

}  // namespace sable
