// The lists an index ranked for a query, kept per thread for the partitions that borrow those
// lists (coarse_lists.h). A search batch runs each query through the partitions one after the
// other on one thread: the indexed partition ranks its lists for the query, and the growing
// partition beside it, grouped by the same lists, takes that ranking instead of ranking every
// centroid again in float32 (the soak's profile: ip_f32, mostly that ranking, was the largest
// share of the search threads' time).
//
// A ranking is found only for the same lists (an id a build or a load gives them) and the same
// prepared query, value for value: never for another query that happens to share an address.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sable {

// A fresh id for a set of lists (an index's centroids as trained or loaded).
uint64_t new_lists_id();

// A slot of this thread's recent rankings, set to (`lists_id`, `query`), its lists emptied for
// the caller to fill, nearest first.
std::vector<uint32_t>& remember_ranking(uint64_t lists_id, const float* query, size_t dim);

// The lists nearest `query` that a search on this thread ranked for `lists_id`, nearest first,
// when it ranked at least `need` of them; null otherwise. Valid until this thread remembers
// another ranking.
const std::vector<uint32_t>* recall_ranking(uint64_t lists_id, const float* query, size_t dim, uint32_t need);

}  // namespace sable
