// The panel tiles (KernelTable::argmin_f32_panels / knn_f32_panels / gemm_f32_panels), written once with
// GNU C vector extensions and instantiated by each distance_<isa>.cpp with its own vector type,
// so each variant compiles with that file's flags. Everything here has internal linkage (an
// unnamed namespace in a header included only by those files): no copy compiled with wider
// instructions can be picked by the linker for another file.
//
// Centroids (or queries) are packed into panels of W = NV * lanes rows, transposed, so a register
// tile of R points x W centroids accumulates with one broadcast per point and NV vector loads per
// dimension. The key ||c||^2 - 2 x.c (0 - 2 x.c for spherical) is reduced to a running per-lane
// minimum in registers; lanes are folded once per chunk of panels.
#pragma once
#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels.h"

namespace sable {
namespace {

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

// acc[r][v] += sum over t < k of xr[r][t] * panel[t * W + v * L + lane]: the register tile every
// panel kernel below is built on (R rows against one panel of W = NV * L columns).
template <class V, int NV, int R>
inline __attribute__((always_inline)) void tile_accumulate(const float* const* xr, const float* panel, size_t k,
                                                          V (&acc)[R][NV]) {
  constexpr int L = int(sizeof(V) / sizeof(float));
  constexpr int W = NV * L;
  for (size_t t = 0; t < k; ++t) {
    V b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) std::memcpy(&b[v], panel + t * W + v * L, sizeof(V));
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const float x = xr[r][t];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] += x * b[v];
    }
  }
}

// acc[r][v] = the same sums from zero.
template <class V, int NV, int R>
inline __attribute__((always_inline)) void tile_dot(const float* const* xr, const float* panel, size_t k, V (&acc)[R][NV]) {
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = V{} + 0.0f;
  tile_accumulate<V, NV, R>(xr, panel, k, acc);
}

template <class V, int NV, int R>
inline __attribute__((always_inline)) void argmin_panels(const ArgminPanelsArgs& j, size_t begin, size_t end) {
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
        tile_dot<V, NV, R>(xr, panel, d, acc);
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

// The same tiles with the roles swapped: the queries are packed into panels, the rows stream past
// them R at a time, and a tile's keys go to the candidate callback when they beat that query's
// threshold (one vector compare per W queries, nearly always false once the thresholds settle).
template <class V, int NV, int R>
inline __attribute__((always_inline)) void knn_panels(const KnnPanelsArgs& j, size_t begin, size_t end) {
  constexpr int L = int(sizeof(V) / sizeof(float));
  constexpr int W = NV * L;
  using VI = typename IntVecOf<V>::type;
  const size_t d = j.dim;
  for (size_t i0 = begin; i0 < end; i0 += R) {
    const float* xr[R];
    float nx[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      xr[r] = j.x + std::min(i0 + r, end - 1) * d;
      float s = 0;
      if (j.l2)
        for (size_t t = 0; t < d; ++t) s += xr[r][t] * xr[r][t];
      nx[r] = s;
    }
    for (size_t p = 0; p < j.npanels; ++p) {
      const float* panel = j.panels + p * d * W;
      V acc[R][NV];
      tile_dot<V, NV, R>(xr, panel, d, acc);
      for (int v = 0; v < NV; ++v) {
        V thr;
        std::memcpy(&thr, j.thr + p * W + v * L, sizeof(V));
        for (int r = 0; r < R && i0 + r < end; ++r) {
          const V key = nx[r] - 2.0f * acc[r][v];
          const VI m = key < thr;
          bool any = false;
          for (int l = 0; l < L; ++l) any |= m[l] != 0;
          if (!any) continue;
          for (int l = 0; l < L; ++l) {
            const size_t q = p * W + size_t(v) * L + l;
            if (m[l] && q < j.nq && key[l] < j.thr[q]) j.candidate(j.ctx, q, key[l], uint32_t(i0 + r));
          }
          std::memcpy(&thr, j.thr + p * W + v * L, sizeof(V));
        }
      }
    }
  }
}

// The matrix product on the same tiles: R rows of A against one panel of W output columns, the
// sum over k in registers, then bias and store. Rows go in chunks that stay in L2 while every
// panel passes over them.
template <class V, int NV, int R>
inline __attribute__((always_inline)) void gemm_panels(const GemmPanelsArgs& j, size_t begin, size_t end) {
  constexpr int L = int(sizeof(V) / sizeof(float));
  constexpr int W = NV * L;
  constexpr size_t kRowChunk = 8 * R;
  const size_t k = j.k;
  const size_t npanels = (j.n + W - 1) / W;
  for (size_t c0 = begin; c0 < end; c0 += kRowChunk) {
    const size_t c1 = std::min(end, c0 + kRowChunk);
    for (size_t p = 0; p < npanels; ++p) {
      const float* panel = j.panels + p * k * W;
      V bias[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) std::memcpy(&bias[v], j.bias + p * W + v * L, sizeof(V));
      const bool full = (p + 1) * W <= j.n;
      for (size_t i0 = c0; i0 < c1; i0 += R) {
        const float* xr[R];
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) xr[r] = j.a + std::min(i0 + r, c1 - 1) * k;
        V acc[R][NV];
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) acc[r][v] = bias[v];
        tile_accumulate<V, NV, R>(xr, panel, k, acc);
        for (int r = 0; r < R && i0 + r < c1; ++r) {
          float* out = j.c + (i0 + r) * j.ldc + p * W;
          if (full) {
            for (int v = 0; v < NV; ++v) std::memcpy(out + v * L, &acc[r][v], sizeof(V));
          } else {
            for (int v = 0; v < NV; ++v)
              for (int l = 0; l < L; ++l)
                if (p * W + size_t(v * L + l) < j.n) out[v * L + l] = acc[r][v][l];
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace sable
