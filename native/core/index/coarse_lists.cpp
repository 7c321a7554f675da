#include "coarse_lists.h"

#include <algorithm>
#include <utility>

#include "../kernels/kernels.h"
#include "list_rankings.h"

namespace sable {

CoarseLists::CoarseLists(std::vector<float> centroids, uint64_t lists_id, size_t dim, Metric metric, uint32_t nprobe,
                         float recall)
    : dim_(dim),
      mode_(metric == Metric::L2 ? KMeansMode::L2 : KMeansMode::Spherical),
      nlist_(uint32_t(dim ? centroids.size() / dim : 0)),
      nprobe_(std::clamp<uint32_t>(nprobe, 1, std::max<uint32_t>(1, nlist_))),
      recall_(recall),
      centroids_(std::move(centroids)),
      lists_id_(lists_id),
      lists_(nlist_) {}

size_t CoarseLists::memory_bytes() const {
  std::shared_lock lock(lists_mu_);
  size_t bytes = centroids_.size() * sizeof(float) + lists_.size() * sizeof(lists_[0]);
  for (const auto& l : lists_) bytes += l.capacity() * sizeof(uint32_t);
  return bytes;
}

void CoarseLists::catch_up(const VectorStore& store, uint32_t rows) {
  if (nlist_ == 0 || assigned_.load() >= rows) return;
  std::unique_lock busy(assigning_, std::try_to_lock);
  if (!busy.owns_lock()) return;
  const uint32_t first = assigned_.load();
  const uint32_t end = std::min(rows, first + kAssignChunk);
  if (first >= end) return;
  const size_t n = end - first;
  std::vector<float> floats;
  const float* x;
  if (store.is_half()) {
    floats.resize(n * dim_);
    for (size_t i = 0; i < n; ++i) store.read_float_row(uint32_t(first + i), floats.data() + i * dim_);
    x = floats.data();
  } else {
    x = store.data() + size_t(first) * dim_;
  }
  std::vector<uint32_t> labels(n);
  kmeans_assign(x, n, dim_, centroids_.data(), nlist_, mode_, 1, labels.data(), nullptr);
  std::unique_lock lock(lists_mu_);
  for (size_t i = 0; i < n; ++i) lists_[labels[i]].push_back(uint32_t(first + i));
  assigned_.store(end);
}

size_t CoarseLists::search(const VectorStore& store, const float* prepared, uint32_t nprobe, const Bitset* allow,
                           uint32_t rows, TopK& out) const {
  const uint32_t probe = std::min(nprobe, nlist_);
  // Per thread, not per query: a search of a listed partition allocates nothing.
  thread_local std::vector<uint32_t> own;
  const std::vector<uint32_t>* nearest = recall_ranking(lists_id_, prepared, dim_, probe);
  size_t scored = nearest ? 0 : nlist_;
  if (!nearest) {
    // The lists ranked as assignment ranks them: nearest centroid by L2, or largest inner
    // product with the (unit) centroids.
    const KernelTable& k = active_kernels();
    thread_local std::vector<std::pair<float, uint32_t>> keys;
    keys.resize(nlist_);
    for (uint32_t l = 0; l < nlist_; ++l) {
      const float* c = centroids_.data() + size_t(l) * dim_;
      keys[l] = {mode_ == KMeansMode::L2 ? k.l2sq_f32(prepared, c, dim_) : -k.ip_f32(prepared, c, dim_), l};
    }
    std::partial_sort(keys.begin(), keys.begin() + probe, keys.end());
    own.resize(probe);
    for (uint32_t i = 0; i < probe; ++i) own[i] = keys[i].second;
    nearest = &own;
  }
  auto offer = [&](uint32_t r) {
    if (allow && !allow->test(r)) return;
    ++scored;
    const float d = store.distance(prepared, r);
    if (!out.full() || d < out.threshold()) out.push(d, r);
  };
  uint32_t assigned;
  {
    std::shared_lock lock(lists_mu_);
    assigned = std::min(assigned_.load(), rows);
    for (uint32_t i = 0; i < probe; ++i)
      for (uint32_t r : lists_[(*nearest)[i]])
        if (r < rows) offer(r);
  }
  for (uint32_t r = assigned; r < rows; ++r) offer(r);
  return scored;
}

}  // namespace sable
