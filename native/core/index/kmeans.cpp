#include "kmeans.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "../kernels/kernels.h"
#include "../kernels/pack.h"
#include "../codes/vector_store.h"

namespace sable {

unsigned resolve_threads(uint32_t threads) {
  if (threads) return threads;
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1;
}

namespace {

// ---- Blocked nearest-centroid assignment and exact k-NN ------------------------------------
//
// Centroids (or, for k-NN, queries) are packed into panels of W rows, transposed; the register
// tiles over them are the kernel table's argmin_f32_panels / knn_f32_panels (kernels/panels.h),
// so the variant follows the table's instruction set (SABLE_SIMD included), and W is its
// panel_width. Chunks of centroid panels are sized to stay in L2 while every point of a thread's
// range streams past them.

// Per-range k-NN state: each query's heap of its best (key, row) so far and its threshold (the
// k-th key once full), which the tile reads to skip rows.
struct KnnState {
  std::vector<float> thr;  // npanels x W: each query's current k-th key (+inf until full, -inf on padding)
  std::vector<std::vector<std::pair<float, uint32_t>>> heaps;  // max-heaps of (key, row)
  size_t k = 0;
  void push(size_t q, float key, uint32_t row) {
    auto& h = heaps[q];
    if (h.size() < k) {
      h.push_back({key, row});
      std::push_heap(h.begin(), h.end());
      if (h.size() == k) thr[q] = h.front().first;
    } else if (key < h.front().first) {
      std::pop_heap(h.begin(), h.end());
      h.back() = {key, row};
      std::push_heap(h.begin(), h.end());
      thr[q] = h.front().first;
    }
  }
};

// KnnPanelsArgs::candidate: ctx is the range's KnnState.
void knn_candidate(void* ctx, size_t q, float key, uint32_t row) { static_cast<KnnState*>(ctx)->push(q, key, row); }

void normalize_rows(float* x, size_t n, size_t dim) {
  for (size_t i = 0; i < n; ++i) normalize(x + i * dim, dim);
}

}  // namespace

void kmeans_assign(const float* x, size_t n, size_t dim, const float* centroids, size_t k, KMeansMode mode,
                   uint32_t threads, uint32_t* labels, float* dist) {
  if (n == 0) return;
  if (k == 0 || dim == 0) {
    for (size_t i = 0; i < n; ++i) {
      labels[i] = 0;
      if (dist) dist[i] = 0;
    }
    return;
  }
  const KernelTable& kt = active_kernels();
  const size_t W = kt.panel_width;
  const size_t npanels = (k + W - 1) / W;
  const std::vector<float> panels = pack_panels(centroids, k, dim, W);
  std::vector<float> pnorm(npanels * W, std::numeric_limits<float>::infinity());
  for (size_t c = 0; c < k; ++c) {
    const float* cr = centroids + c * dim;
    double nn = 0;
    for (size_t t = 0; t < dim; ++t) nn += double(cr[t]) * cr[t];
    pnorm[c] = mode == KMeansMode::L2 ? float(nn) : 0.0f;
  }
  std::vector<float> key_store;
  float* key = dist;
  if (!key) {
    key_store.resize(n);
    key = key_store.data();
  }
  ArgminPanelsArgs job;
  job.x = x;
  job.dim = dim;
  job.panels = panels.data();
  job.pnorm = pnorm.data();
  job.npanels = npanels;
  job.panels_per_chunk = std::max<size_t>(1, (size_t(192) << 10) / (dim * W * sizeof(float)));
  job.labels = labels;
  job.key = key;
  const unsigned t = resolve_threads(threads);
  const size_t grain = std::clamp<size_t>(n / (size_t(t) * 8) + 1, 64, 4096);
  parallel_for(n, grain, t, [&](size_t b, size_t e) { kt.argmin_f32_panels(job, b, e); });
  if (dist) {
    for (size_t i = 0; i < n; ++i) {
      if (mode == KMeansMode::L2)
        dist[i] = std::max(0.0f, dist[i] + kt.ip_f32(x + i * dim, x + i * dim, dim));
      else
        dist[i] *= 0.5f;
    }
  }
}

void knn_blocked(const float* queries, size_t nq, const float* x, size_t n, size_t dim, KMeansMode mode, uint32_t k,
                 uint32_t threads, std::vector<std::vector<uint32_t>>& out) {
  out.assign(nq, {});
  if (nq == 0 || n == 0 || k == 0) return;
  const KernelTable& kt = active_kernels();
  const size_t W = kt.panel_width;
  const std::vector<float> panels = pack_panels(queries, nq, dim, W);
  KnnPanelsArgs job;
  job.x = x;
  job.dim = dim;
  job.panels = panels.data();
  job.npanels = (nq + W - 1) / W;
  job.nq = nq;
  job.l2 = mode == KMeansMode::L2;
  const unsigned t = std::max(1u, unsigned(std::min<size_t>(resolve_threads(threads), (n + 1023) / 1024)));
  const size_t grain = (n + t - 1) / t;
  std::vector<KnnState> states((n + grain - 1) / grain);
  for (auto& st : states) {
    st.k = k;
    // Padding lanes never take a row.
    st.thr.assign(job.npanels * W, -std::numeric_limits<float>::infinity());
    std::fill(st.thr.begin(), st.thr.begin() + nq, std::numeric_limits<float>::infinity());
    st.heaps.assign(nq, {});
  }
  job.candidate = knn_candidate;
  parallel_for(n, grain, t, [&](size_t b, size_t e) {
    KnnState& st = states[b / grain];
    KnnPanelsArgs args = job;
    args.thr = st.thr.data();
    args.ctx = &st;
    kt.knn_f32_panels(args, b, e);
  });
  for (size_t q = 0; q < nq; ++q) {
    std::vector<std::pair<float, uint32_t>> all;
    for (auto& st : states) all.insert(all.end(), st.heaps[q].begin(), st.heaps[q].end());
    std::sort(all.begin(), all.end());
    if (all.size() > k) all.resize(k);
    for (auto& e : all) out[q].push_back(e.second);
  }
}

namespace {

// Points of the training sample read a block at a time when they are not one float array.
constexpr size_t kSampleBlock = 8192;

// The training sample: one float array (the caller's rows, or a copy of those drawn), or the
// indexes of the rows drawn from a reader (half-precision rows), read a block at a time each
// time the training passes over them: only a block is held in floats, where a copy of 128k
// drawn rows of 768-d held 393 MB while a million-row partition trained.
class Sample {
 public:
  Sample(const float* points, size_t s, size_t dim) : view_(points), callers_(points), s_(s), dim_(dim) {}
  Sample(std::vector<float>&& points, size_t s, size_t dim) : owned_(std::move(points)), s_(s), dim_(dim) {
    view_ = owned_.data();
  }
  Sample(const PointReader* read, std::vector<uint32_t>&& rows, size_t dim, bool normalise)
      : read_(read), rows_(std::move(rows)), s_(rows_.size()), dim_(dim), normalise_(normalise) {}

  Sample(const Sample&) = delete;
  Sample& operator=(const Sample&) = delete;

  size_t size() const { return s_; }

  // Points [b, e) as contiguous floats: a view, or `scratch` filled.
  const float* block(size_t b, size_t e, std::vector<float>& scratch, unsigned threads) const {
    if (view_) return view_ + b * dim_;
    scratch.resize((e - b) * dim_);
    parallel_for(e - b, 256, threads, [&](size_t i0, size_t i1) {
      for (size_t i = i0; i < i1; ++i) {
        (*read_)(rows_[b + i], scratch.data() + i * dim_);
        if (normalise_) normalize(scratch.data() + i * dim_, dim_);
      }
    });
    return scratch.data();
  }

  void point(size_t i, float* out) const {
    if (view_) {
      std::memcpy(out, view_ + i * dim_, dim_ * sizeof(float));
      return;
    }
    (*read_)(rows_[i], out);
    if (normalise_) normalize(out, dim_);
  }

  // f(b, e, points) over consecutive blocks of the points, in order.
  template <class F>
  void each_block(unsigned threads, F&& f) const {
    if (view_) {
      f(size_t(0), s_, view_);
      return;
    }
    std::vector<float> scratch;
    for (size_t b = 0; b < s_; b += kSampleBlock) {
      const size_t e = std::min(s_, b + kSampleBlock);
      f(b, e, block(b, e, scratch, threads));
    }
  }

  // The points in a new order (point i to dest[i]), for the second level's clusters: our own
  // copy is reordered in place and drawn rows reindexed; the caller's array is copied.
  void reorder(const std::vector<size_t>& dest) {
    if (read_) {
      std::vector<uint32_t> rows(s_);
      for (size_t i = 0; i < s_; ++i) rows[dest[i]] = rows_[i];
      rows_ = std::move(rows);
      return;
    }
    if (callers_) {
      owned_.resize(s_ * dim_);
      for (size_t i = 0; i < s_; ++i) std::memcpy(owned_.data() + dest[i] * dim_, view_ + i * dim_, dim_ * sizeof(float));
      view_ = owned_.data();
      return;
    }
    std::vector<size_t> to(dest);
    std::vector<float> held(dim_);
    float* x = owned_.data();
    for (size_t i = 0; i < s_; ++i) {
      // Follows the cycle through i: the point at i goes where it belongs, the one there comes to i.
      while (to[i] != i) {
        const size_t j = to[i];
        std::memcpy(held.data(), x + j * dim_, dim_ * sizeof(float));
        std::memcpy(x + j * dim_, x + i * dim_, dim_ * sizeof(float));
        std::memcpy(x + i * dim_, held.data(), dim_ * sizeof(float));
        std::swap(to[i], to[j]);
      }
    }
  }

  // Frees a copy reorder() made of the caller's array: the points in their order again.
  void release_copy() {
    if (!callers_) return;
    owned_.clear();
    owned_.shrink_to_fit();
    view_ = callers_;
  }

 private:
  const float* view_ = nullptr;
  const float* callers_ = nullptr;
  std::vector<float> owned_;
  const PointReader* read_ = nullptr;
  std::vector<uint32_t> rows_;
  size_t s_ = 0, dim_ = 0;
  bool normalise_ = false;
};

// Nearest centroid of every point of the sample.
void assign_sample(const Sample& x, size_t dim, const float* cent, size_t k, KMeansMode mode, unsigned threads,
                   uint32_t* labels) {
  x.each_block(threads, [&](size_t b, size_t e, const float* points) {
    kmeans_assign(points, e - b, dim, cent, k, mode, threads, labels + b, nullptr);
  });
}

// Means of the assigned points; empty clusters take half of the largest one (two slightly
// perturbed copies of its centroid); unit norm for spherical.
void update_centroids(const Sample& x, size_t dim, const uint32_t* labels, size_t k, KMeansMode mode, unsigned threads,
                      std::mt19937_64& rng, float* cent) {
  std::vector<double> sums(k * dim, 0.0);
  std::vector<size_t> counts(k, 0);
  x.each_block(threads, [&](size_t b, size_t e, const float* points) {
    for (size_t i = b; i < e; ++i) {
      const uint32_t c = labels[i];
      const float* xi = points + (i - b) * dim;
      double* sc = sums.data() + size_t(c) * dim;
      for (size_t t = 0; t < dim; ++t) sc[t] += xi[t];
      ++counts[c];
    }
  });
  for (size_t c = 0; c < k; ++c) {
    if (!counts[c]) continue;
    const double inv = 1.0 / double(counts[c]);
    for (size_t t = 0; t < dim; ++t) cent[c * dim + t] = float(sums[c * dim + t] * inv);
  }
  std::uniform_int_distribution<int> coin(0, 1);
  for (size_t c = 0; c < k; ++c) {
    if (counts[c]) continue;
    const size_t big = size_t(std::max_element(counts.begin(), counts.end()) - counts.begin());
    if (counts[big] < 2) break;  // fewer distinct points than centroids: nothing to split
    float* cb = cent + big * dim;
    float* cc = cent + c * dim;
    for (size_t t = 0; t < dim; ++t) {
      const float delta = (std::fabs(cb[t]) + 1e-6f) * (1.0f / 1024) * (coin(rng) ? 1.0f : -1.0f);
      cc[t] = cb[t] + delta;
      cb[t] -= delta;
    }
    counts[c] = counts[big] / 2;
    counts[big] -= counts[c];
  }
  if (mode == KMeansMode::Spherical) normalize_rows(cent, k, dim);
}

// Lloyd's algorithm on the sample's points (already normalised for spherical) from k distinct
// random points. `done(fraction)` is called after each iteration.
template <class Done>
void lloyd(const Sample& x, size_t dim, size_t k, uint32_t iters, KMeansMode mode, unsigned threads,
           std::mt19937_64& rng, float* cent, Done&& done) {
  const size_t s = x.size();
  {
    std::vector<uint32_t> perm(s);
    std::iota(perm.begin(), perm.end(), 0u);
    for (size_t i = 0; i < k; ++i) {
      std::uniform_int_distribution<size_t> pick(i, s - 1);
      std::swap(perm[i], perm[pick(rng)]);
      x.point(perm[i], cent + i * dim);
    }
  }
  if (s <= k) return;
  std::vector<uint32_t> labels(s, 0), prev(s, UINT32_MAX);
  for (uint32_t it = 0; it < iters; ++it) {
    assign_sample(x, dim, cent, k, mode, threads, labels.data());
    if (labels == prev) break;
    prev = labels;
    update_centroids(x, dim, labels.data(), k, mode, threads, rng, cent);
    done(double(it + 1) / iters);
  }
}

// `x`: the points as one array when the caller holds them so (a sample of every point then
// trains in place); `read`: point by point otherwise, the sample then held as row indexes.
KMeansResult train(const float* x, const PointReader& read, size_t n, size_t dim, const KMeansOptions& opt) {
  KMeansResult res;
  if (n == 0) return res;
  const size_t k = std::clamp<size_t>(opt.k, 1, n);
  res.k = k;
  res.centroids.assign(k * dim, 0.0f);
  if (dim == 0) return res;
  const unsigned threads = resolve_threads(opt.threads);
  std::mt19937_64 rng(opt.seed);
  auto report = [&](double frac) {
    if (opt.progress)
      opt.progress->store(opt.progress_from +
                          uint32_t(std::lround((opt.progress_to - opt.progress_from) * std::clamp(frac, 0.0, 1.0))));
  };

  // Training sample: max_points_per_centroid points per centroid, drawn without replacement.
  const size_t per = std::max<uint32_t>(opt.max_points_per_centroid, 1);
  const size_t s = std::min(n, std::max(k, k * per));
  // Every row, already in the form training needs (l2, or unit rows for spherical): no copy.
  bool in_place = x && s == n;
  if (in_place && opt.mode == KMeansMode::Spherical) {
    const KernelTable& kt = active_kernels();
    for (size_t i = 0; i < n && in_place; ++i) in_place = std::fabs(kt.ip_f32(x + i * dim, x + i * dim, dim) - 1.0f) < 1e-4f;
  }
  std::vector<uint32_t> drawn;
  if (!in_place) {
    drawn.resize(n);
    std::iota(drawn.begin(), drawn.end(), 0u);
    if (s < n) {
      for (size_t i = 0; i < s; ++i) {
        std::uniform_int_distribution<size_t> pick(i, n - 1);
        std::swap(drawn[i], drawn[pick(rng)]);
      }
      drawn.resize(s);
      std::sort(drawn.begin(), drawn.end());  // sequential reads of x
    }
  }
  const bool normalise = opt.mode == KMeansMode::Spherical;
  Sample sample = [&]() -> Sample {
    if (in_place) return Sample(x, s, dim);
    if (!x) return Sample(&read, std::move(drawn), dim, normalise);
    std::vector<float> points(s * dim);
    for (size_t i = 0; i < s; ++i) read(drawn[i], points.data() + i * dim);
    if (normalise) normalize_rows(points.data(), s, dim);
    return Sample(std::move(points), s, dim);
  }();
  float* cent = res.centroids.data();
  const uint32_t iters = std::max<uint32_t>(opt.iterations, 1);

  const size_t k1 = size_t(std::lround(std::sqrt(double(k))));
  if (!opt.two_level_min_k || k < opt.two_level_min_k || k1 < 2 || s <= k) {
    lloyd(sample, dim, k, iters, opt.mode, threads, rng, cent, report);
    report(1.0);
    return res;
  }

  // Two levels: sqrt(k) clusters of the sample, each split by its own k-means into a share of the
  // k centroids proportional to its size, then full Lloyd iterations over all k to settle the
  // borders. Costs about s*sqrt(k) per iteration instead of s*k.
  std::vector<float> top(k1 * dim);
  lloyd(sample, dim, k1, iters, opt.mode, threads, rng, top.data(), [&](double f) { report(0.1 * f); });
  std::vector<uint32_t> labels(s);
  assign_sample(sample, dim, top.data(), k1, opt.mode, threads, labels.data());
  std::vector<size_t> size1(k1, 0);
  for (uint32_t l : labels) ++size1[l];
  // Shares by largest remainder; a cluster gets at least one centroid and at most one per point.
  std::vector<size_t> share(k1, 0);
  {
    size_t given = 0;
    std::vector<std::pair<double, size_t>> rem;
    for (size_t c = 0; c < k1; ++c) {
      if (!size1[c]) continue;
      const double exact = double(k) * double(size1[c]) / double(s);
      share[c] = std::clamp<size_t>(size_t(exact), 1, size1[c]);
      given += share[c];
      rem.push_back({exact - double(share[c]), c});
    }
    std::sort(rem.begin(), rem.end(), [](auto& a, auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    while (given < k) {
      bool moved = false;
      for (auto& [r, c] : rem)
        if (given < k && share[c] < size1[c]) share[c]++, given++, moved = true;
      if (!moved) break;
    }
    while (given > k) {
      bool moved = false;
      for (auto it = rem.rbegin(); it != rem.rend() && given > k; ++it)
        if (share[it->second] > 1) share[it->second]--, given--, moved = true;
      if (!moved) break;
    }
  }
  // Points grouped by top cluster.
  std::vector<size_t> start(k1 + 1, 0), cstart(k1 + 1, 0);
  for (size_t c = 0; c < k1; ++c) start[c + 1] = start[c] + size1[c], cstart[c + 1] = cstart[c] + share[c];
  const size_t k_got = cstart[k1];  // == k unless every point is one of fewer distinct groups
  {
    std::vector<size_t> fill(start.begin(), start.end() - 1), dest(s);
    for (size_t i = 0; i < s; ++i) dest[i] = fill[labels[i]]++;
    sample.reorder(dest);
  }
  std::vector<uint64_t> seeds(k1);
  for (auto& sd : seeds) sd = rng();
  std::vector<size_t> order(k1);
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size1[a] * share[a] > size1[b] * share[b]; });
  std::atomic<size_t> finished{0};
  parallel_for(k1, 1, threads, [&](size_t b, size_t e) {
    std::vector<float> scratch;
    for (size_t oi = b; oi < e; ++oi) {
      const size_t c = order[oi];
      if (share[c]) {
        std::mt19937_64 crng(seeds[c]);
        const Sample cluster(sample.block(start[c], start[c + 1], scratch, 1), size1[c], dim);
        lloyd(cluster, dim, share[c], iters, opt.mode, 1, crng, cent + cstart[c] * dim, [](double) {});
      }
      report(0.1 + 0.6 * double(++finished) / double(k1));
    }
  });
  // The caller's rows again, in their order (a copy made to group them is freed).
  sample.release_copy();
  // Fill any shortfall with random sample points, then settle with full iterations.
  for (size_t c = k_got; c < k; ++c) {
    std::uniform_int_distribution<size_t> pick(0, s - 1);
    sample.point(pick(rng), cent + c * dim);
  }
  const uint32_t refine = std::min<uint32_t>(opt.two_level_refine_iterations, iters);
  labels.assign(s, 0);
  for (uint32_t it = 0; it < refine; ++it) {
    assign_sample(sample, dim, cent, k, opt.mode, threads, labels.data());
    update_centroids(sample, dim, labels.data(), k, opt.mode, threads, rng, cent);
    report(0.7 + 0.3 * double(it + 1) / refine);
  }
  report(1.0);
  return res;
}

}  // namespace

KMeansResult kmeans_train(const float* x, size_t n, size_t dim, const KMeansOptions& opt) {
  return train(x, [&](size_t i, float* out) { std::memcpy(out, x + i * dim, dim * sizeof(float)); }, n, dim, opt);
}

KMeansResult kmeans_train(const PointReader& read, size_t n, size_t dim, const KMeansOptions& opt) {
  return train(nullptr, read, n, dim, opt);
}

}  // namespace sable
