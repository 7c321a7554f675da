// K-means for the coarse quantizers of ivf and sable, and the blocked nearest-centroid
// assignment they share. Points are row-major float vectors.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace sable {

// L2: squared euclidean distance, centroids are cluster means.
// Spherical: centroids have unit norm and a point belongs to the centroid of largest inner product
// (cosine and inner-product data; for unit-norm points this is plain L2 k-means on the sphere).
enum class KMeansMode : uint8_t { L2 = 0, Spherical = 1 };

struct KMeansOptions {
  uint32_t k = 1;
  uint32_t iterations = 12;               // Lloyd iterations (fewer when assignments stop changing)
  uint32_t max_points_per_centroid = 64;  // training sample: at most this many points per centroid
  uint32_t threads = 0;                   // 0: hardware concurrency
  uint64_t seed = 42;
  KMeansMode mode = KMeansMode::L2;
  // From this many centroids on, train in two levels (sqrt(k) clusters, each split by its own
  // k-means) and finish with `two_level_refine_iterations` full Lloyd iterations; 0: never.
  uint32_t two_level_min_k = 0;
  uint32_t two_level_refine_iterations = 2;
  // Optional progress: moves from progress_from to progress_to while training.
  std::atomic<uint32_t>* progress = nullptr;
  uint32_t progress_from = 0, progress_to = 100;
};

struct KMeansResult {
  std::vector<float> centroids;  // k x dim, row-major
  size_t k = 0;
};

// Trains min(opt.k, n) centroids (at least 1 when n > 0; none when n == 0).
KMeansResult kmeans_train(const float* x, size_t n, size_t dim, const KMeansOptions& opt);

// Fills `out` (dim floats) with point i; the points a training sample draws, one at a time.
using PointReader = std::function<void(size_t i, float* out)>;

// The same training over points read one at a time (points not held as one float array, such
// as half-precision rows): only the sample is held in floats.
KMeansResult kmeans_train(const PointReader& read, size_t n, size_t dim, const KMeansOptions& opt);

// Nearest centroid of each of n points. labels[i] gets the centroid index; dist (optional) gets
// the squared L2 distance (L2) or the negated inner product (Spherical). Ties go to the lower
// index. Blocked: dot products of register tiles of points x centroids, centroids in L2-sized
// chunks, threads over points.
void kmeans_assign(const float* x, size_t n, size_t dim, const float* centroids, size_t k, KMeansMode mode,
                   uint32_t threads, uint32_t* labels, float* dist);

// Exact k nearest rows of x (n x dim) for each of nq queries, nearest first: smallest squared L2
// distance (L2) or largest inner product (Spherical; rows and queries are not normalised). Same
// blocked tiles as kmeans_assign; for small query batches against many rows.
void knn_blocked(const float* queries, size_t nq, const float* x, size_t n, size_t dim, KMeansMode mode, uint32_t k,
                 uint32_t threads, std::vector<std::vector<uint32_t>>& out);

// Threads to use for a BuildOptions.threads-style value (0: hardware concurrency, at least 1).
unsigned resolve_threads(uint32_t threads);

// Runs f(begin, end) over [0, n) in chunks of `grain` on up to `threads` threads (the caller's
// thread included). Exceptions from f are rethrown on the caller's thread.
template <class F>
void parallel_for(size_t n, size_t grain, unsigned threads, F&& f) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  size_t chunks = (n + grain - 1) / grain;
  unsigned t = unsigned(std::min<size_t>(std::max(threads, 1u), chunks));
  if (t <= 1) {
    f(size_t(0), n);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto work = [&] {
    try {
      for (;;) {
        if (failed.load(std::memory_order_relaxed)) return;
        size_t c = next.fetch_add(1, std::memory_order_relaxed);
        if (c >= chunks) return;
        f(c * grain, std::min(n, (c + 1) * grain));
      }
    } catch (...) {
      if (!failed.exchange(true)) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  for (unsigned i = 1; i < t; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace sable
