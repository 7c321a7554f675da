#include "ivf.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "../io.h"
#include "../kernels/kernels.h"

namespace sable {

namespace {

constexpr uint32_t kIvfFormat = 0x31465649;  // "IVF1"
constexpr uint32_t kKMeansIterations = 10;
// Rows of the segment used as held-out queries when choosing default_nprobe, and the recall@10
// they must reach.
constexpr size_t kTuneQueries = 256;
constexpr double kTuneTargetRecall = 0.95;
// Bytes of the next list's codes prefetched while the current one is scanned.
constexpr size_t kPrefetchBytes = 2048;
// Rows sampled to fit the SQ8 ranges of the residuals.
constexpr size_t kSq8TrainRows = 65536;

inline void prefetch_bytes(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off);
}

KMeansMode mode_for(Metric m) { return m == Metric::L2 ? KMeansMode::L2 : KMeansMode::Spherical; }

// Scans positions [begin, end) of one list. L2: dist = l2(q', code) with q' = q - centroid.
// IP/cosine: dist = base - ip(q, code) with base = -<q, centroid>.
template <bool kL2, bool kFilter>
size_t scan_codes(const uint8_t* codes, const uint32_t* ids, size_t len, size_t d, const float* q, float base,
                  const Sq8& sq8, const Bitset* allow, TopK& cand) {
  const KernelTable& kt = active_kernels();
  const auto fn = kL2 ? kt.l2sq_sq8 : kt.ip_sq8;
  const float* vmin = sq8.vmin();
  const float* scale = sq8.scale();
  const size_t allow_n = kFilter ? allow->size() : 0;
  size_t scored = 0;
  for (size_t j = 0; j < len; ++j) {
    const uint32_t id = ids[j];
    if (kFilter && (id >= allow_n || !allow->test(id))) continue;
    const float s = fn(q, codes + j * d, vmin, scale, d);
    const float dist = kL2 ? s : base - s;
    ++scored;
    if (dist < cand.threshold()) cand.push(dist, id);
  }
  return scored;
}

}  // namespace

uint32_t IvfIndex::default_rerank_depth(uint32_t k) { return std::max<uint32_t>(4 * k, 32); }

uint32_t IvfIndex::default_nlist(size_t n) const { return uint32_t(std::lround(4.0 * std::sqrt(double(n)))); }

float IvfIndex::centroid_distance(const float* q, uint32_t c) const {
  const KernelTable& kt = active_kernels();
  return metric_ == Metric::L2 ? kt.l2sq_f32(q, centroid(c), dim_) : -kt.ip_f32(q, centroid(c), dim_);
}

void IvfIndex::rank_all_lists(const float* q, std::vector<Probe>& out, SearchStats& stats) const {
  out.resize(nlist_);
  for (uint32_t c = 0; c < nlist_; ++c) out[c] = {centroid_distance(q, c), c};
  std::sort(out.begin(), out.end(), [](const Probe& a, const Probe& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.list < b.list);
  });
  stats.candidates_scored += nlist_;
}

void IvfIndex::probe_lists(const float* q, uint32_t nprobe, const SearchParams&, std::vector<Probe>& out,
                           SearchStats& stats) const {
  out.resize(nlist_);
  for (uint32_t c = 0; c < nlist_; ++c) out[c] = {centroid_distance(q, c), c};
  stats.candidates_scored += nlist_;
  auto less = [](const Probe& a, const Probe& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.list < b.list);
  };
  nprobe = std::min(nprobe, nlist_);
  if (nprobe < nlist_) std::nth_element(out.begin(), out.begin() + nprobe, out.end(), less);
  out.resize(nprobe);
  std::sort(out.begin(), out.end(), less);
}

size_t IvfIndex::scan_list(uint32_t l, const float* q, const Bitset* allow, TopK& cand, float* scratch) const {
  const size_t d = dim_;
  const uint32_t begin = offsets_[l], end = offsets_[l + 1];
  const uint8_t* codes = codes_.data() + size_t(begin) * d;
  const uint32_t* ids = ids_.data() + begin;
  const bool l2 = metric_ == Metric::L2;
  const float* qv = q;
  float base = 0;
  if (residual_) {
    const float* c = centroid(l);
    if (l2) {
      for (size_t t = 0; t < d; ++t) scratch[t] = q[t] - c[t];
      qv = scratch;
    } else {
      base = -active_kernels().ip_f32(q, c, d);
    }
  }
  const size_t len = end - begin;
  if (l2)
    return allow ? scan_codes<true, true>(codes, ids, len, d, qv, base, sq8_, allow, cand)
                 : scan_codes<true, false>(codes, ids, len, d, qv, base, sq8_, allow, cand);
  return allow ? scan_codes<false, true>(codes, ids, len, d, qv, base, sq8_, allow, cand)
               : scan_codes<false, false>(codes, ids, len, d, qv, base, sq8_, allow, cand);
}

void IvfIndex::search(const VectorStore& store, const float* query, const SearchParams& p, TopK& out,
                      SearchStats& stats) const {
  if (nlist_ == 0 || out.k() == 0) return;
  const uint32_t k = uint32_t(std::min<size_t>(out.k(), UINT32_MAX));
  const uint32_t nprobe = std::clamp<uint32_t>(p.nprobe ? p.nprobe : default_nprobe_, 1, nlist_);
  const uint32_t depth = std::max(p.rerank_depth ? p.rerank_depth : default_rerank_depth(k), k);
  const size_t d = dim_;

  thread_local std::vector<Probe> probes;
  thread_local std::vector<float> scratch;
  scratch.resize(d);
  probe_lists(query, nprobe, p, probes, stats);

  TopK cand(depth);
  uint64_t scored = 0;
  auto scan = [&](uint32_t l) { scored += scan_list(l, query, p.allow, cand, scratch.data()); };
  auto prefetch_list = [&](uint32_t l) {
    const uint32_t b = offsets_[l], e = offsets_[l + 1];
    prefetch_bytes(codes_.data() + size_t(b) * d, std::min(size_t(e - b) * d, kPrefetchBytes));
    prefetch_bytes(ids_.data() + b, std::min<size_t>(size_t(e - b) * 4, 256));
  };
  uint32_t scanned = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (i + 1 < probes.size()) prefetch_list(probes[i + 1].list);
    scan(probes[i].list);
    ++scanned;
  }
  // Too few candidates (tiny lists, a selective filter, a sparse graph answer): keep scanning
  // lists in brute-force order until k candidates are in hand or every list has been seen.
  if (cand.size() < k && scanned < nlist_) {
    thread_local std::vector<uint8_t> seen;
    thread_local std::vector<Probe> all;
    seen.assign(nlist_, 0);
    for (const Probe& pr : probes) seen[pr.list] = 1;
    rank_all_lists(query, all, stats);
    for (const Probe& pr : all) {
      if (cand.size() >= k) break;
      if (seen[pr.list]) continue;
      scan(pr.list);
      ++scanned;
    }
  }
  // Exact re-ranking of the candidates.
  auto cands = cand.take_sorted();
  const size_t row_bytes = d * sizeof(float);
  for (size_t i = 0; i < cands.size() && i < 2; ++i) prefetch_bytes(store.row(cands[i].label), row_bytes);
  for (size_t i = 0; i < cands.size(); ++i) {
    if (i + 2 < cands.size()) prefetch_bytes(store.row(cands[i + 2].label), row_bytes);
    const float dist = store.distance(query, cands[i].label);
    if (dist < out.threshold() || !out.full()) out.push(dist, cands[i].label);
  }
  stats.candidates_scored += scored + cands.size();
  stats.nprobe = std::max(stats.nprobe, scanned);
}

void IvfIndex::build(const VectorStore& store, const BuildOptions& opts, std::atomic<uint32_t>& progress) {
  progress = 0;
  dim_ = store.dim();
  metric_ = store.metric();
  const size_t n = store.size();
  nlist_ = 0;
  default_nprobe_ = 1;
  centroids_.clear();
  offsets_.clear();
  ids_.clear();
  codes_.clear();
  sq8_ = Sq8(dim_);
  if (n > size_t(UINT32_MAX)) throw Error("invalid_argument", "an ivf index holds at most 2^32-1 rows");
  if (n == 0) {
    on_centroids(opts, nullptr);
    progress = 100;
    return;
  }
  uint32_t want = opts.nlist ? opts.nlist : default_nlist(n);
  want = uint32_t(std::clamp<size_t>(want, 1, n));

  KMeansOptions ko;
  ko.k = want;
  ko.iterations = kKMeansIterations;
  ko.max_points_per_centroid = kmeans_points_per_centroid();
  ko.threads = opts.threads;
  ko.seed = opts.seed;
  ko.mode = mode_for(metric_);
  ko.progress = &progress;
  ko.progress_from = 0;
  ko.progress_to = 60;
  KMeansResult km = kmeans_train(store.data(), n, dim_, ko);
  centroids_ = std::move(km.centroids);
  nlist_ = uint32_t(km.k);

  assign_and_encode(store, opts, progress);
  progress = 85;
  on_centroids(opts, nullptr);
  progress = 90;
  tune_default_nprobe(store, opts);
  progress = 100;
}

void IvfIndex::assign_and_encode(const VectorStore& store, const BuildOptions& opts, std::atomic<uint32_t>& progress) {
  const size_t n = store.size(), d = dim_;
  const unsigned threads = resolve_threads(opts.threads);
  std::vector<uint32_t> labels(n);
  kmeans_assign(store.data(), n, d, centroids_.data(), nlist_, mode_for(metric_), threads, labels.data(), nullptr);
  progress = 72;

  // Drop empty lists (duplicates, fewer distinct rows than lists): every list holds a row.
  std::vector<uint32_t> count(nlist_, 0);
  for (uint32_t l : labels) ++count[l];
  std::vector<uint32_t> remap(nlist_, UINT32_MAX);
  uint32_t kept = 0;
  for (uint32_t l = 0; l < nlist_; ++l) {
    if (!count[l]) continue;
    if (kept != l) std::memmove(centroids_.data() + size_t(kept) * d, centroid(l), d * sizeof(float));
    count[kept] = count[l];
    remap[l] = kept++;
  }
  nlist_ = kept;
  centroids_.resize(size_t(nlist_) * d);
  centroids_.shrink_to_fit();
  count.resize(nlist_);

  offsets_.assign(nlist_ + 1, 0);
  for (uint32_t l = 0; l < nlist_; ++l) offsets_[l + 1] = offsets_[l] + count[l];
  ids_.resize(n);
  {
    std::vector<uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
    for (uint32_t r = 0; r < n; ++r) ids_[fill[remap[labels[r]]]++] = r;
  }
  std::vector<uint32_t> list_of(n);
  for (uint32_t l = 0; l < nlist_; ++l)
    for (uint32_t pos = offsets_[l]; pos < offsets_[l + 1]; ++pos) list_of[pos] = l;

  auto residual = [&](uint32_t pos, float* out) {
    const float* x = store.row(ids_[pos]);
    if (!residual_) {
      std::memcpy(out, x, d * sizeof(float));
      return;
    }
    const float* c = centroid(list_of[pos]);
    for (size_t t = 0; t < d; ++t) out[t] = x[t] - c[t];
  };

  // SQ8 ranges from a sample of the residuals.
  {
    const size_t s = std::min(n, kSq8TrainRows);
    std::vector<float> sample(s * d);
    std::mt19937_64 rng(opts.seed ^ 0x5a5a5a5a5a5a5a5aull);
    std::uniform_int_distribution<size_t> pick(0, n - 1);
    for (size_t i = 0; i < s; ++i) residual(uint32_t(s == n ? i : pick(rng)), sample.data() + i * d);
    sq8_.train(sample.data(), s);
  }
  progress = 76;

  codes_.resize(n * d);
  parallel_for(nlist_, std::max<size_t>(1, nlist_ / (size_t(threads) * 16)), threads, [&](size_t b, size_t e) {
    std::vector<float> tmp(d);
    for (size_t l = b; l < e; ++l)
      for (uint32_t pos = offsets_[l]; pos < offsets_[l + 1]; ++pos) {
        residual(pos, tmp.data());
        sq8_.encode(tmp.data(), codes_.data() + size_t(pos) * d);
      }
  });
}

void IvfIndex::tune_default_nprobe(const VectorStore& store, const BuildOptions& opts) {
  const size_t n = store.size();
  default_nprobe_ = 1;
  if (nlist_ <= 1 || n < 2) return;
  const unsigned threads = resolve_threads(opts.threads);
  const size_t nq = std::min(n, kTuneQueries);
  const uint32_t kk = uint32_t(std::min<size_t>(10, n - 1));

  std::vector<uint32_t> queries(nq);
  {
    std::mt19937_64 rng(opts.seed ^ 0x7475756e65ull);
    if (nq == n) {
      std::iota(queries.begin(), queries.end(), 0u);
    } else {
      std::uniform_int_distribution<size_t> pick(0, n - 1);
      for (auto& q : queries) q = uint32_t(pick(rng));
    }
  }
  // Exact distance of each query's kk-th nearest other row.
  std::vector<float> kth(nq);
  parallel_for(nq, 4, threads, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      TopK top(kk + 1);
      SearchStats st;
      exact_scan(store, store.row(queries[i]), nullptr, top, st);
      auto res = top.take_sorted();
      uint32_t seen = 0;
      float last = res.empty() ? 0.f : res.back().distance;
      for (auto& r : res)
        if (r.label != queries[i] && ++seen == kk) last = r.distance;
      kth[i] = last;
    }
  });

  std::vector<double> memo(nlist_ + 1, -1.0);
  auto recall = [&](uint32_t nprobe) {
    if (memo[nprobe] >= 0) return memo[nprobe];
    std::vector<uint32_t> hits(nq, 0);
    parallel_for(nq, 4, threads, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        TopK top(kk + 1);
        SearchParams sp;
        sp.k = kk + 1;
        sp.nprobe = nprobe;
        SearchStats st;
        search(store, store.row(queries[i]), sp, top, st);
        uint32_t taken = 0, h = 0;
        for (auto& r : top.take_sorted()) {
          if (r.label == queries[i] || taken == kk) continue;
          ++taken;
          h += r.distance <= kth[i];
        }
        hits[i] = h;
      }
    });
    double total = 0;
    for (uint32_t h : hits) total += h;
    return memo[nprobe] = total / (double(nq) * kk);
  };
  // Doubling, then bisection for the fewest lists that reach the target.
  uint32_t lo = 0, hi = 1;
  while (hi < nlist_ && recall(hi) < kTuneTargetRecall) {
    lo = hi;
    hi = std::min(nlist_, hi * 2);
  }
  while (hi - lo > 1 && hi - lo > hi / 16) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (recall(mid) >= kTuneTargetRecall)
      hi = mid;
    else
      lo = mid;
  }
  default_nprobe_ = hi;
}

void IvfIndex::save(Writer& w) const {
  w.u32(kIvfFormat);
  w.u8(uint8_t(type()));
  w.u64(dim_);
  w.u8(uint8_t(metric_));
  w.u8(residual_ ? 1 : 0);
  w.u32(nlist_);
  w.u32(default_nprobe_);
  w.vec(centroids_);
  w.vec(offsets_);
  w.vec(ids_);
  w.vec(codes_);
  sq8_.save(w);
  save_coarse(w);
}

void IvfIndex::load(Reader& r, const VectorStore& store) {
  auto corrupt = [](const std::string& what) { throw Error("snapshot_corrupt", "ivf index snapshot: " + what); };
  if (r.u32() != kIvfFormat) corrupt("unknown format");
  if (r.u8() != uint8_t(type())) corrupt("written by another index type");
  const uint64_t dim = r.u64();
  const uint8_t metric = r.u8();
  const uint8_t residual = r.u8();
  const uint32_t nlist = r.u32();
  const uint32_t dnprobe = r.u32();
  if (dim != store.dim()) corrupt("dimension differs from the segment's");
  if (metric != uint8_t(store.metric())) corrupt("metric differs from the segment's");
  if (residual > 1) corrupt("bad flags");
  auto centroids = r.vec<float>();
  auto offsets = r.vec<uint32_t>();
  auto ids = r.vec<uint32_t>();
  auto codes = r.vec<uint8_t>();
  Sq8 sq8;
  sq8.load(r);
  const size_t n = store.size();
  if (sq8.dim() != dim) corrupt("quantizer dimension");
  if ((nlist == 0) != (n == 0)) corrupt("list count does not match the segment");
  if (nlist > n) corrupt("more lists than rows");
  if (centroids.size() != size_t(nlist) * dim) corrupt("centroid table size");
  if (nlist == 0) {
    if (!offsets.empty() && !(offsets.size() == 1 && offsets[0] == 0)) corrupt("list offsets");
    offsets.assign(1, 0);
  } else if (offsets.size() != size_t(nlist) + 1 || offsets[0] != 0) {
    corrupt("list offsets");
  }
  for (size_t l = 0; l + 1 < offsets.size(); ++l)
    if (offsets[l + 1] < offsets[l]) corrupt("list offsets decrease");
  if (offsets.back() != ids.size() || ids.size() != n) corrupt("lists do not cover the segment");
  if (codes.size() != n * dim) corrupt("code table size");
  {
    Bitset seen(n);
    for (uint32_t id : ids) {
      if (id >= n || seen.test(id)) corrupt("row id out of range or repeated");
      seen.set(id);
    }
  }
  for (float v : centroids)
    if (!std::isfinite(v)) corrupt("non-finite centroid");
  dim_ = size_t(dim);
  metric_ = Metric(metric);
  residual_ = residual == 1;
  nlist_ = nlist;
  default_nprobe_ = nlist ? std::clamp<uint32_t>(dnprobe, 1, nlist) : 1;
  centroids_ = std::move(centroids);
  offsets_ = std::move(offsets);
  ids_ = std::move(ids);
  codes_ = std::move(codes);
  sq8_ = std::move(sq8);
  BuildOptions none;
  on_centroids(none, &r);
}

size_t IvfIndex::memory_bytes() const {
  return centroids_.capacity() * sizeof(float) + offsets_.capacity() * sizeof(uint32_t) +
         ids_.capacity() * sizeof(uint32_t) + codes_.capacity() + 2 * sq8_.dim() * sizeof(float) +
         coarse_memory_bytes();
}

std::unique_ptr<VectorIndex> make_ivf_index() { return std::make_unique<IvfIndex>(); }

}  // namespace sable
