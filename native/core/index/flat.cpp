// Exact search: the product's `flat` index and the oracle of every recall test.
#include "../io.h"
#include "index.h"

namespace sable {

void exact_scan(const VectorStore& store, const float* query, const Bitset* allow, TopK& out, SearchStats& stats) {
  auto score = [&](uint32_t r) {
    float d = store.distance(query, r);
    if (d < out.threshold() || !out.full()) out.push(d, r);
  };
  if (allow) {
    allow->for_each(score);
    stats.candidates_scored += allow->count();
  } else {
    uint32_t n = uint32_t(store.size());
    for (uint32_t r = 0; r < n; ++r) score(r);
    stats.candidates_scored += n;
  }
}

namespace {

class FlatIndex final : public VectorIndex {
 public:
  IndexType type() const override { return IndexType::Flat; }
  void build(const VectorStore&, const BuildOptions&, std::atomic<uint32_t>& progress) override { progress = 100; }
  void search(const VectorStore& store, const float* query, const SearchParams& p, TopK& out,
              SearchStats& stats) const override {
    exact_scan(store, query, p.allow, out, stats);
  }
  void save(Writer& w) const override { w.u8(0); }
  void load(Reader& r, const VectorStore&) override { r.u8(); }
  size_t memory_bytes() const override { return 0; }
  std::unique_ptr<VectorIndex> keep_rows(const std::vector<uint32_t>&, const VectorStore&) const override {
    return std::make_unique<FlatIndex>();
  }
};

}  // namespace

std::unique_ptr<VectorIndex> make_flat_index() { return std::make_unique<FlatIndex>(); }

}  // namespace sable
