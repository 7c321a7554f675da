#include "kmeans.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "../kernels/kernels.h"
#include "../vector_store.h"

namespace sable {

unsigned resolve_threads(uint32_t threads) {
  if (threads) return threads;
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1;
}

namespace {

// ---- Blocked nearest-centroid assignment --------------------------------------------------
//
// Centroids are packed into panels of W centroids, transposed (panel[t][lane] = c[lane][t]), so
// a register tile of R points x W centroids accumulates with one broadcast per point and NV
// vector loads per dimension. The key ||c||^2 - 2 x.c (0 - 2 x.c for spherical) is reduced to a
// running per-lane minimum in registers; lanes are folded once per chunk of panels. Chunks are
// sized to stay in L2 while every point of a thread's range streams past them.
//
// The tile code is written once with GCC vector extensions and instantiated in functions carrying
// target attributes, so the build's portable baseline still gets AVX2/AVX-512 code here; the
// variant follows the kernel table's instruction set (SABLE_SIMD included).

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

template <class V>
struct IntVecOf;
template <>
struct IntVecOf<v4f> { using type = v4i; };
template <>
struct IntVecOf<v8f> { using type = v8i; };
template <>
struct IntVecOf<v16f> { using type = v16i; };

struct AssignJob {
  const float* x = nullptr;
  size_t dim = 0;
  const float* panels = nullptr;  // npanels x dim x W
  const float* pnorm = nullptr;   // npanels x W: ||c||^2 (L2) or 0 (spherical); +inf on padding lanes
  size_t npanels = 0;
  size_t panels_per_chunk = 1;
  uint32_t* labels = nullptr;
  float* key = nullptr;  // per point: min over centroids of ||c||^2 - 2 x.c
};

template <class V, int NV, int R>
inline __attribute__((always_inline)) void assign_rows(const AssignJob& j, size_t begin, size_t end) {
  constexpr int L = int(sizeof(V) / sizeof(float));
  constexpr int W = NV * L;
  using VI = typename IntVecOf<V>::type;
  const size_t d = j.dim;
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t i = begin; i < end; ++i) j.key[i] = inf, j.labels[i] = 0;
  VI iota;
  for (int l = 0; l < L; ++l) iota[l] = l;
  V vinf;
  for (int l = 0; l < L; ++l) vinf[l] = inf;

  for (size_t p0 = 0; p0 < j.npanels; p0 += j.panels_per_chunk) {
    const size_t p1 = std::min(j.npanels, p0 + j.panels_per_chunk);
    for (size_t i0 = begin; i0 < end; i0 += R) {
      const float* xr[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) xr[r] = j.x + std::min(i0 + r, end - 1) * d;
      V bv[R][NV];
      VI bi[R][NV];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) bv[r][v] = vinf, bi[r][v] = VI{} + 0;
      for (size_t p = p0; p < p1; ++p) {
        const float* panel = j.panels + p * d * W;
        V acc[R][NV];
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) acc[r][v] = V{} + 0.0f;
        for (size_t t = 0; t < d; ++t) {
          V b[NV];
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) std::memcpy(&b[v], panel + t * W + v * L, sizeof(V));
#pragma GCC unroll 16
          for (int r = 0; r < R; ++r) {
            const float s = xr[r][t];
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[r][v] += s * b[v];
          }
        }
        const float* pn = j.pnorm + p * W;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          V nv;
          std::memcpy(&nv, pn + v * L, sizeof(V));
          const VI idx = iota + int32_t(p * W + size_t(v) * L);
#pragma GCC unroll 16
          for (int r = 0; r < R; ++r) {
            const V dv = nv - 2.0f * acc[r][v];
            const VI m = dv < bv[r][v];
            bv[r][v] = m ? dv : bv[r][v];
            bi[r][v] = m ? idx : bi[r][v];
          }
        }
      }
      for (int r = 0; r < R && i0 + r < end; ++r) {
        float best = j.key[i0 + r];
        uint32_t label = j.labels[i0 + r];
        for (int v = 0; v < NV; ++v)
          for (int l = 0; l < L; ++l) {
            const float dv = bv[r][v][l];
            const uint32_t id = uint32_t(bi[r][v][l]);
            if (dv < best || (dv == best && id < label)) best = dv, label = id;
          }
        j.key[i0 + r] = best;
        j.labels[i0 + r] = label;
      }
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"))) void assign_avx512(const AssignJob& j, size_t b,
                                                                                            size_t e) {
  assign_rows<v16f, 2, 6>(j, b, e);
}
__attribute__((target("avx2,fma"))) void assign_avx2(const AssignJob& j, size_t b, size_t e) {
  assign_rows<v8f, 2, 6>(j, b, e);
}
#endif
void assign_generic(const AssignJob& j, size_t b, size_t e) { assign_rows<v4f, 2, 4>(j, b, e); }

struct AssignVariant {
  size_t width;  // W: centroids per panel
  void (*run)(const AssignJob&, size_t, size_t);
};

AssignVariant assign_variant() {
#if defined(__x86_64__) || defined(__i386__)
  switch (active_kernels().isa) {
    case Isa::Avx512: return {32, assign_avx512};
    case Isa::Avx2: return {16, assign_avx2};
    default: break;
  }
#endif
  return {8, assign_generic};
}

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
  const AssignVariant var = assign_variant();
  const size_t W = var.width;
  const size_t npanels = (k + W - 1) / W;
  std::vector<float> panels(npanels * dim * W, 0.0f);
  std::vector<float> pnorm(npanels * W, std::numeric_limits<float>::infinity());
  for (size_t c = 0; c < k; ++c) {
    const float* cr = centroids + c * dim;
    float* pc = panels.data() + (c / W) * dim * W + c % W;
    double nn = 0;
    for (size_t t = 0; t < dim; ++t) {
      pc[t * W] = cr[t];
      nn += double(cr[t]) * cr[t];
    }
    pnorm[c] = mode == KMeansMode::L2 ? float(nn) : 0.0f;
  }
  std::vector<float> key_store;
  float* key = dist;
  if (!key) {
    key_store.resize(n);
    key = key_store.data();
  }
  AssignJob job;
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
  parallel_for(n, grain, t, [&](size_t b, size_t e) { var.run(job, b, e); });
  if (dist) {
    const KernelTable& kt = active_kernels();
    for (size_t i = 0; i < n; ++i) {
      if (mode == KMeansMode::L2)
        dist[i] = std::max(0.0f, dist[i] + kt.ip_f32(x + i * dim, x + i * dim, dim));
      else
        dist[i] *= 0.5f;
    }
  }
}

KMeansResult kmeans_train(const float* x, size_t n, size_t dim, const KMeansOptions& opt) {
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
      opt.progress->store(opt.progress_from + uint32_t(std::lround((opt.progress_to - opt.progress_from) * frac)));
  };

  // Training sample: max_points_per_centroid points per centroid, drawn without replacement.
  const size_t per = std::max<uint32_t>(opt.max_points_per_centroid, 1);
  const size_t s = std::min(n, std::max(k, k * per));
  std::vector<float> sample(s * dim);
  if (s == n) {
    std::memcpy(sample.data(), x, n * dim * sizeof(float));
  } else {
    std::vector<uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    for (size_t i = 0; i < s; ++i) {
      std::uniform_int_distribution<size_t> pick(i, n - 1);
      std::swap(perm[i], perm[pick(rng)]);
    }
    std::sort(perm.begin(), perm.begin() + s);  // sequential reads of x
    for (size_t i = 0; i < s; ++i) std::memcpy(sample.data() + i * dim, x + size_t(perm[i]) * dim, dim * sizeof(float));
  }
  if (opt.mode == KMeansMode::Spherical) normalize_rows(sample.data(), s, dim);

  float* cent = res.centroids.data();
  {
    // Initial centroids: k distinct sample points at random.
    std::vector<uint32_t> perm(s);
    std::iota(perm.begin(), perm.end(), 0u);
    for (size_t i = 0; i < k; ++i) {
      std::uniform_int_distribution<size_t> pick(i, s - 1);
      std::swap(perm[i], perm[pick(rng)]);
      std::memcpy(cent + i * dim, sample.data() + size_t(perm[i]) * dim, dim * sizeof(float));
    }
  }
  if (s == k) {
    report(1.0);
    return res;
  }

  std::vector<uint32_t> labels(s, 0), prev(s, UINT32_MAX);
  std::vector<double> sums(k * dim);
  std::vector<size_t> counts(k);
  const uint32_t iters = std::max<uint32_t>(opt.iterations, 1);
  std::uniform_int_distribution<int> coin(0, 1);
  for (uint32_t it = 0; it < iters; ++it) {
    kmeans_assign(sample.data(), s, dim, cent, k, opt.mode, threads, labels.data(), nullptr);
    size_t changed = 0;
    for (size_t i = 0; i < s; ++i) changed += labels[i] != prev[i];
    if (changed == 0) break;
    prev = labels;

    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(counts.begin(), counts.end(), 0);
    for (size_t i = 0; i < s; ++i) {
      const uint32_t c = labels[i];
      const float* xi = sample.data() + i * dim;
      double* sc = sums.data() + size_t(c) * dim;
      for (size_t t = 0; t < dim; ++t) sc[t] += xi[t];
      ++counts[c];
    }
    for (size_t c = 0; c < k; ++c) {
      if (!counts[c]) continue;
      const double inv = 1.0 / double(counts[c]);
      for (size_t t = 0; t < dim; ++t) cent[c * dim + t] = float(sums[c * dim + t] * inv);
    }
    // Empty clusters: split the largest one in two slightly perturbed copies.
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
    if (opt.mode == KMeansMode::Spherical) normalize_rows(cent, k, dim);
    report(double(it + 1) / iters);
  }
  report(1.0);
  return res;
}

}  // namespace sable
