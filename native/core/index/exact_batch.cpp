#include "exact_batch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../kernels/kernels.h"
#include "../kernels/pack.h"

namespace sable {

namespace {

// The matrix-product tile finds candidates (its keys summed in another order than the distance
// kernels); each is then scored by store.distance, so answers are those of exact_scan. A row's
// key must beat the query's threshold key widened by kSlack of the keys' scale, far above the
// float rounding between the two sums, so no row exact_scan would keep is filtered out.
constexpr float kSlack = 1e-3f;

struct Scan {
  const VectorStore* store;
  const float* prepared;
  size_t dim;
  const Bitset* allow;
  TopK* outs;
  bool l2;
  std::vector<float> qnorm;  // ||q||^2 (l2)
  std::vector<float> thr;    // per query (panel lanes): the key a row must beat

  // The key a row must beat to be offered to query q: its k-th best distance as a key
  // (||x||^2 - 2 <x, q> for l2, the distance minus ||q||^2; -2 <x, q>, twice the distance,
  // otherwise), widened by the slack; every row until q holds k.
  void update_threshold(size_t q) {
    if (!outs[q].full()) return;
    const float k = l2 ? outs[q].threshold() - qnorm[q] : 2.0f * outs[q].threshold();
    thr[q] = k + kSlack * (std::fabs(k) + (l2 ? qnorm[q] : 2.0f));
  }

  void offer(size_t q, uint32_t row) {
    if (allow && !allow->test(row)) return;
    TopK& top = outs[q];
    const float d = store->distance(prepared + q * dim, row);
    if (top.full() && !(d < top.threshold())) return;
    top.push(d, row);
    update_threshold(q);
  }
};

void offer(void* ctx, size_t q, float, uint32_t row) { static_cast<Scan*>(ctx)->offer(q, row); }

}  // namespace

void exact_scan_batch(const VectorStore& store, const float* prepared, size_t nq, const Bitset* allow, TopK* outs,
                      uint32_t begin, uint32_t end) {
  const size_t dim = store.dim();
  end = uint32_t(std::min<size_t>(end, store.size()));
  if (begin >= end || nq == 0) return;
  if (store.is_half()) {
    // Half rows have no float tile: blocks of rows that stay in cache while every query scores them.
    constexpr uint32_t kBlock = 32;
    for (uint32_t r0 = begin; r0 < end; r0 += kBlock) {
      const uint32_t r1 = std::min(end, r0 + kBlock);
      for (size_t q = 0; q < nq; ++q)
        for (uint32_t r = r0; r < r1; ++r) {
          if (allow && !allow->test(r)) continue;
          const float d = store.distance(prepared + q * dim, r);
          if (d < outs[q].threshold() || !outs[q].full()) outs[q].push(d, r);
        }
    }
    return;
  }
  const KernelTable& kt = active_kernels();
  const bool narrow = nq <= kt.narrow_panel_width;
  const size_t W = narrow ? kt.narrow_panel_width : kt.panel_width, npanels = (nq + W - 1) / W;
  const std::vector<float> panels = pack_panels(prepared, nq, dim, W);
  Scan scan{&store, prepared, dim, allow, outs, store.metric() == Metric::L2, std::vector<float>(nq, 0.0f),
            std::vector<float>(npanels * W, -std::numeric_limits<float>::infinity())};
  for (size_t q = 0; q < nq; ++q) {
    if (scan.l2)
      for (size_t t = 0; t < dim; ++t) scan.qnorm[q] += prepared[q * dim + t] * prepared[q * dim + t];
    // A range after the first starts from the best rows found so far.
    scan.thr[q] = std::numeric_limits<float>::infinity();
    scan.update_threshold(q);
  }
  KnnPanelsArgs job;
  job.x = store.data();
  job.dim = dim;
  job.panels = panels.data();
  job.npanels = npanels;
  job.nq = nq;
  job.l2 = scan.l2;
  job.thr = scan.thr.data();
  job.candidate = offer;
  job.ctx = &scan;
  (narrow ? kt.knn_f32_panels_narrow : kt.knn_f32_panels)(job, begin, end);
}

}  // namespace sable
