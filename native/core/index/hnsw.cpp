// HNSW: see hnsw.h for the layout. Construction follows hnswlib's addPoint under ParallelFor
// (greedy descent, beam of ef_construction per level, getNeighborsByHeuristic2, bidirectional
// links pruned by the same heuristic when full); search follows searchKnn / searchBaseLayerST.
#include "hnsw.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>

#include "../io.h"
#include "../kernels/kernels.h"

namespace sable {

namespace {

constexpr uint32_t kSaveTag = 0x57534E48;  // "HNSW"
constexpr uint32_t kSaveVersion = 1;
constexpr uint32_t kMaxLevel = 63;
constexpr uint32_t kMaxRows = 0x7FFFFFFFu;  // the top bit of an id marks "expanded" in the pool
constexpr uint32_t kExpanded = 0x80000000u;
constexpr uint32_t kPrefetchAhead = 4;      // rows prefetched ahead of the distance loop
constexpr size_t kPrefetchMaxBytes = 1024;  // per row; the hardware streams the rest

[[noreturn]] void corrupt(const std::string& what) { throw Error(Code::snapshot_corrupt, "hnsw snapshot: " + what); }

struct Cand {
  float d;
  uint32_t id;
};
inline bool by_distance(const Cand& a, const Cand& b) { return a.d < b.d || (a.d == b.d && a.id < b.id); }

// Distances through the active kernel table, as VectorStore::distance computes them (L2: squared
// euclidean; IP/cosine: negated dot product), with the table looked up once per query.
struct Dist {
  float (*fn)(const float*, const float*, size_t);
  float sign;
  size_t dim;
  size_t row_bytes;
  const float* base;

  explicit Dist(const VectorStore& s)
      : sign(s.metric() == Metric::L2 ? 1.0f : -1.0f),
        dim(s.dim()),
        row_bytes(std::min(s.dim() * sizeof(float), kPrefetchMaxBytes)),
        base(s.data()) {
    const KernelTable& k = active_kernels();
    fn = s.metric() == Metric::L2 ? k.l2sq_f32 : k.ip_f32;
  }
  const float* row(uint32_t r) const { return base + size_t(r) * dim; }
  float operator()(const float* a, const float* b) const { return sign * fn(a, b, dim); }
  float to(const float* q, uint32_t r) const { return sign * fn(q, row(r), dim); }
  void prefetch(uint32_t r) const {
    const char* p = reinterpret_cast<const char*>(row(r));
    uintptr_t a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63);
    const uintptr_t e = reinterpret_cast<uintptr_t>(p) + row_bytes;
    for (; a < e; a += 64) __builtin_prefetch(reinterpret_cast<const void*>(a), 0, 3);
  }
  // A candidate this close to q counts as a duplicate of q in the neighbour heuristic (see
  // select_neighbors). L2: exactly 0. IP/cosine: within float rounding of q's own distance.
  float dup_limit(const float* q) const {
    if (sign > 0) return 0.0f;
    float self = (*this)(q, q);
    return self + 1e-6f * std::fabs(self);
  }
};

// Epoch-tagged visited set: a query bumps the epoch instead of clearing; tags are reset only
// when the 16-bit epoch wraps.
struct Visited {
  std::vector<uint16_t> tags;
  uint16_t epoch = 0;

  void begin(size_t n) {
    if (tags.size() < n) {
      tags.assign(n, 0);
      epoch = 0;
    }
    if (++epoch == 0) {
      std::fill(tags.begin(), tags.end(), uint16_t{0});
      epoch = 1;
    }
  }
  // True when already visited; marks it otherwise.
  bool test_set(uint32_t i) {
    if (tags[i] == epoch) return true;
    tags[i] = epoch;
    return false;
  }
};

// The level-0 beam of an unfiltered search: the ef best candidates so far, sorted ascending, with a
// cursor on the nearest one not yet expanded. Expanding "the nearest unexpanded candidate still
// among the ef best" until none is left is exactly hnswlib's two-heap loop (candidate_set +
// top_candidates, stop when the nearest candidate is worse than the worst of a full top set).
struct Pool {
  Cand* a = nullptr;
  uint32_t size = 0, cap = 0, cur = 0;

  void reset(Cand* buf, uint32_t capacity) {
    a = buf;
    cap = capacity;
    size = cur = 0;
  }
  // False when the pool is full and d does not beat its worst entry. With a `same` predicate, also
  // false when an entry at exactly the same distance is the same vector (construction only: a
  // beam full of copies of one vector would leave a new node no distinct neighbours).
  template <class Same = std::nullptr_t>
  bool insert(float d, uint32_t id, const Same& same = nullptr) {
    if (size == cap && !(d < a[size - 1].d)) return false;
    // Branchless upper bound: equal distances keep their arrival order.
    uint32_t lo = 0;
    if (size) {
      const Cand* base = a;
      uint32_t len = size;
      while (len > 1) {
        uint32_t half = len >> 1;
        base = base[half].d <= d ? base + half : base;
        len -= half;
      }
      lo = uint32_t(base - a) + (base->d <= d);
    }
    if constexpr (!std::is_same_v<Same, std::nullptr_t>) {
      for (uint32_t j = lo; j > 0 && a[j - 1].d == d; --j)
        if (same(a[j - 1].id & ~kExpanded, id)) return false;
    }
    uint32_t last = size == cap ? size - 1 : size;
    if (last > lo) std::memmove(a + lo + 1, a + lo, size_t(last - lo) * sizeof(Cand));
    a[lo] = {d, id};
    if (size < cap) ++size;
    if (lo < cur) cur = lo;
    return true;
  }
  bool has_next() const { return cur < size; }
  uint32_t next_id() const { return a[cur].id; }
  uint32_t pop() {
    uint32_t id = a[cur].id;
    a[cur].id |= kExpanded;
    do ++cur;
    while (cur < size && (a[cur].id & kExpanded));
    return id;
  }
  uint32_t id_at(uint32_t i) const { return a[i].id & ~kExpanded; }
};

// Beam search on one level. `links(c)` returns c's list at that level (count, ids...); `l0` and
// `stride` locate level-0 lists for prefetching the next candidate's links. `nbuf` holds M0 ids.
template <bool kDedupe = false, class Links>
inline uint64_t beam_search(const Dist& dist, const float* q, Pool& pool, Visited& vis, Links&& links,
                            const uint32_t* l0, size_t stride, uint32_t* nbuf) {
  auto same = [&](uint32_t x, uint32_t y) { return std::memcmp(dist.row(x), dist.row(y), dist.dim * sizeof(float)) == 0; };
  uint64_t scored = 0;
  while (pool.has_next()) {
    uint32_t c = pool.pop();
    if (pool.has_next()) __builtin_prefetch(l0 + size_t(pool.next_id()) * stride, 0, 3);
    const uint32_t* ll = links(c);
    uint32_t cnt = ll[0], nb = 0;
    for (uint32_t j = 1; j <= cnt; ++j) {
      uint32_t v = ll[j];
      if (!vis.test_set(v)) nbuf[nb++] = v;
    }
    uint32_t pre = std::min(nb, kPrefetchAhead);
    for (uint32_t j = 0; j < pre; ++j) dist.prefetch(nbuf[j]);
    for (uint32_t j = 0; j < nb; ++j) {
      if (j + kPrefetchAhead < nb) dist.prefetch(nbuf[j + kPrefetchAhead]);
      if constexpr (kDedupe) pool.insert(dist.to(q, nbuf[j]), nbuf[j], same);
      else pool.insert(dist.to(q, nbuf[j]), nbuf[j]);
    }
    scored += nb;
  }
  return scored;
}

// hnswlib's getNeighborsByHeuristic2 over candidates sorted ascending by distance to q: keep a
// candidate unless an already kept one is nearer to it than q is. One addition for duplicates:
// candidates within dup_limit of q (exact copies of q) are kept up to m/2 and never prune others,
// so a pile of identical vectors cannot fill a node's list and cut it off from the graph.
void select_neighbors(const Dist& dist, const Cand* c, size_t nc, uint32_t m, float dup_limit, std::vector<Cand>& out) {
  out.clear();
  if (nc < m) {
    out.assign(c, c + nc);
    return;
  }
  const uint32_t max_dups = std::max(1u, m / 2);
  uint32_t ndup = 0;
  for (size_t i = 0; i < nc && out.size() < m; ++i) {
    const Cand& x = c[i];
    if (x.d <= dup_limit) {
      if (ndup < max_dups) {
        out.push_back(x);
        ++ndup;
      }
      continue;
    }
    const float* xr = dist.row(x.id);
    bool good = true;
    for (size_t k = ndup; k < out.size(); ++k) {
      if (dist(dist.row(out[k].id), xr) < x.d) {
        good = false;
        break;
      }
    }
    if (good) out.push_back(x);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Search

struct HnswIndex::Scratch {
  Visited vis;
  std::vector<Cand> pool, cand, top;
  std::vector<uint32_t> nbuf;
  bool busy = false;
};

void HnswIndex::search(const VectorStore& store, const float* query, const SearchParams& p, TopK& out,
                       SearchStats& stats) const {
  const uint32_t bw = p.beam_width ? p.beam_width : kDefaultBeamWidth;
  const uint32_t ef = std::max({bw, p.k, uint32_t(std::min<size_t>(out.k(), UINT32_MAX))});
  stats.beam_width = ef;
  if (n_ == 0 || out.k() == 0) return;
  if (store.size() < n_ || store.dim() != dim_)
    throw Error(Code::invalid_argument, "hnsw index searched with a store it was not built over");

  // One scratch per thread, reused across queries and indexes; a nested search on the same
  // thread (none today) gets its own.
  static thread_local Scratch tls;
  std::unique_ptr<Scratch> own;
  Scratch* s = &tls;
  if (s->busy) {
    own = std::make_unique<Scratch>();
    s = own.get();
  }
  s->busy = true;
  struct Release {
    Scratch* s;
    ~Release() { s->busy = false; }
  } release{s};

  const Dist dist(store);
  uint64_t scored = 0;

  // Greedy descent through the upper levels.
  uint32_t cur = entry_;
  float curd = dist.to(query, cur);
  ++scored;
  for (int l = max_level_; l > 0; --l) {
    bool changed = true;
    while (changed) {
      changed = false;
      const uint32_t* ll = links_upper(cur, l);
      uint32_t cnt = ll[0];
      for (uint32_t j = 1; j <= cnt; ++j) {
        uint32_t v = ll[j];
        float d = dist.to(query, v);
        if (d < curd) {
          curd = d;
          cur = v;
          changed = true;
        }
      }
      scored += cnt;
    }
  }

  const uint32_t cap = std::min(ef, n_);
  const size_t stride = size_t(m0_) + 1;
  const uint32_t* l0 = level0_.data();
  if (s->nbuf.size() < m0_) s->nbuf.resize(m0_);
  s->vis.begin(n_);
  auto links = [&](uint32_t c) { return l0 + size_t(c) * stride; };

  if (!p.allow) {
    if (s->pool.size() < cap) s->pool.resize(cap);
    Pool pool;
    pool.reset(s->pool.data(), cap);
    s->vis.test_set(cur);
    pool.insert(curd, cur);
    scored += beam_search(dist, query, pool, s->vis, links, l0, stride, s->nbuf.data());
    uint32_t take = uint32_t(std::min<size_t>(pool.size, out.k()));
    for (uint32_t i = 0; i < take; ++i) out.push(pool.a[i].d, pool.id_at(i));
    stats.candidates_scored += scored;
    return;
  }

  // Filtered (hnswlib's isIdAllowed): candidates hold every node reached, the result set only
  // allowed rows; stop when the nearest candidate is worse than the worst of a full result set.
  const Bitset& allow = *p.allow;
  const size_t an = allow.size();
  auto allowed = [&](uint32_t v) { return v < an && allow.test(v); };
  auto cand_cmp = [](const Cand& a, const Cand& b) { return b.d < a.d; };  // min-heap
  auto top_cmp = [](const Cand& a, const Cand& b) { return a.d < b.d; };   // max-heap
  std::vector<Cand>& cand = s->cand;
  std::vector<Cand>& top = s->top;
  cand.clear();
  top.clear();
  float lower = std::numeric_limits<float>::infinity();
  s->vis.test_set(cur);
  cand.push_back({curd, cur});
  if (allowed(cur)) {
    top.push_back({curd, cur});
    lower = curd;
  }
  uint32_t* nbuf = s->nbuf.data();
  while (!cand.empty()) {
    Cand c = cand.front();
    if (c.d > lower && top.size() >= cap) break;
    std::pop_heap(cand.begin(), cand.end(), cand_cmp);
    cand.pop_back();
    if (!cand.empty()) __builtin_prefetch(links(cand.front().id), 0, 3);
    const uint32_t* ll = links(c.id);
    uint32_t cnt = ll[0], nb = 0;
    for (uint32_t j = 1; j <= cnt; ++j) {
      uint32_t v = ll[j];
      if (!s->vis.test_set(v)) nbuf[nb++] = v;
    }
    uint32_t pre = std::min(nb, kPrefetchAhead);
    for (uint32_t j = 0; j < pre; ++j) dist.prefetch(nbuf[j]);
    for (uint32_t j = 0; j < nb; ++j) {
      if (j + kPrefetchAhead < nb) dist.prefetch(nbuf[j + kPrefetchAhead]);
      uint32_t v = nbuf[j];
      float d = dist.to(query, v);
      if (top.size() < cap || d < lower) {
        cand.push_back({d, v});
        std::push_heap(cand.begin(), cand.end(), cand_cmp);
        if (allowed(v)) {
          top.push_back({d, v});
          std::push_heap(top.begin(), top.end(), top_cmp);
          if (top.size() > cap) {
            std::pop_heap(top.begin(), top.end(), top_cmp);
            top.pop_back();
          }
          lower = top.front().d;
        }
      }
    }
    scored += nb;
  }
  std::sort(top.begin(), top.end(), by_distance);
  size_t take = std::min(top.size(), out.k());
  for (size_t i = 0; i < take; ++i) out.push(top[i].d, top[i].id);
  stats.candidates_scored += scored;
}

// ---------------------------------------------------------------------------------------------
// Build

struct HnswIndex::Builder {
  HnswIndex& ix;
  const Dist dist;
  const uint32_t n, m, m0, efc;
  const size_t stride;
  const bool locking;
  std::unique_ptr<std::mutex[]> locks;
  uint32_t lock_mask = 0;
  std::mutex global;  // guards entry_ / max_level_; held through the insertion of a new top node

  // Per-thread buffers.
  struct Local {
    Visited vis;
    std::vector<Cand> pool, cands, sel, work;
    std::vector<uint32_t> nbuf, tmp;
  };

  Builder(HnswIndex& index, const VectorStore& store, bool threaded)
      : ix(index),
        dist(store),
        n(index.n_),
        m(index.m_),
        m0(index.m0_),
        efc(index.efc_),
        stride(size_t(index.m0_) + 1),
        locking(threaded) {
    if (locking) {
      // Striped locks: a thread holds at most one at a time, so sharing a stripe cannot deadlock.
      uint32_t count = 1;
      while (count < n && count < (1u << 16)) count <<= 1;
      locks.reset(new std::mutex[count]);
      lock_mask = count - 1;
    }
  }

  void init_local(Local& L) const {
    L.pool.resize(efc);
    L.nbuf.resize(m0);
    L.tmp.resize(size_t(m0) + 1);
  }

  std::mutex& lock_of(uint32_t v) { return locks[v & lock_mask]; }
  uint32_t* list(uint32_t v, int l) {
    return l == 0 ? ix.level0_.data() + size_t(v) * stride
                  : ix.upper_.data() + (size_t(ix.upper_first_[v]) + size_t(l - 1)) * (m + 1);
  }
  // The list of v at level l, copied under v's lock when other threads may be writing it.
  const uint32_t* read(uint32_t v, int l, uint32_t* tmp) {
    uint32_t* p = list(v, l);
    if (!locking) return p;
    std::lock_guard<std::mutex> g(lock_of(v));
    uint32_t c = p[0];
    tmp[0] = c;
    std::memcpy(tmp + 1, p + 1, size_t(c) * sizeof(uint32_t));
    return tmp;
  }
  std::unique_lock<std::mutex> guard(uint32_t v) {
    return locking ? std::unique_lock<std::mutex>(lock_of(v)) : std::unique_lock<std::mutex>();
  }

  static void write(uint32_t* p, const std::vector<Cand>& sel) {
    p[0] = uint32_t(sel.size());
    for (size_t i = 0; i < sel.size(); ++i) p[1 + i] = sel[i].id;
  }

  void insert(uint32_t v, Local& L) {
    const int level = ix.levels_[v];
    std::unique_lock<std::mutex> top_lock(global);
    const int maxl = ix.max_level_;
    const uint32_t ep = ix.entry_;
    if (level <= maxl) top_lock.unlock();

    const float* q = dist.row(v);
    uint32_t cur = ep;
    float curd = dist.to(q, cur);
    for (int l = maxl; l > level; --l) greedy(q, l, cur, curd, L);

    const float dup = dist.dup_limit(q);
    for (int l = std::min(level, maxl); l >= 0; --l) {
      L.vis.begin(n);
      L.vis.test_set(v);  // never a neighbour of itself, even if another thread already linked it
      L.vis.test_set(cur);
      Pool pool;
      pool.reset(L.pool.data(), efc);
      pool.insert(curd, cur);
      auto links = [&](uint32_t c) { return read(c, l, L.tmp.data()); };
      beam_search<true>(dist, q, pool, L.vis, links, ix.level0_.data(), stride, L.nbuf.data());
      L.cands.resize(pool.size);
      for (uint32_t i = 0; i < pool.size; ++i) L.cands[i] = {pool.a[i].d, pool.id_at(i)};
      connect(v, l, dup, L);
      cur = L.sel[0].id;  // the nearest selected neighbour enters the next level down
      curd = L.sel[0].d;
    }
    if (level > maxl) {
      ix.entry_ = v;
      ix.max_level_ = level;
    }
  }

  // HNSW's pruning can leave a node with no in-links at level 0 (mostly with small m), and then no
  // search reaches it. After insertion, flood level 0 from the entry point; link each node left
  // out from the nearest reached node that has a free slot, found by an ordinary search for it.
  void repair(Local& L) {
    std::vector<uint8_t> seen(n, 0);
    std::vector<uint32_t> stack;
    auto flood = [&](uint32_t from) {
      seen[from] = 1;
      stack.push_back(from);
      while (!stack.empty()) {
        uint32_t v = stack.back();
        stack.pop_back();
        const uint32_t* ll = list(v, 0);
        for (uint32_t j = 1; j <= ll[0]; ++j)
          if (!seen[ll[j]]) {
            seen[ll[j]] = 1;
            stack.push_back(ll[j]);
          }
      }
    };
    flood(ix.entry_);
    for (uint32_t u = 0; u < n; ++u) {
      if (seen[u]) continue;
      const float* q = dist.row(u);
      uint32_t cur = ix.entry_;
      float curd = dist.to(q, cur);
      for (int l = ix.max_level_; l > 0; --l) greedy(q, l, cur, curd, L);
      if (!seen[cur]) {
        cur = ix.entry_;
        curd = dist.to(q, cur);
      }
      L.vis.begin(n);
      L.vis.test_set(u);
      L.vis.test_set(cur);
      Pool pool;
      pool.reset(L.pool.data(), efc);
      pool.insert(curd, cur);
      auto links = [&](uint32_t c) { return list(c, 0); };
      beam_search(dist, q, pool, L.vis, links, ix.level0_.data(), stride, L.nbuf.data());
      for (uint32_t i = 0; i < pool.size; ++i) {
        uint32_t r = pool.id_at(i);
        uint32_t* p = list(r, 0);
        if (!seen[r] || p[0] >= m0) continue;
        p[1 + p[0]] = u;
        ++p[0];
        flood(u);
        break;
      }
    }
  }

  void greedy(const float* q, int l, uint32_t& cur, float& curd, Local& L) {
    bool changed = true;
    while (changed) {
      changed = false;
      const uint32_t* ll = read(cur, l, L.tmp.data());
      for (uint32_t j = 1, cnt = ll[0]; j <= cnt; ++j) {
        uint32_t u = ll[j];
        float d = dist.to(q, u);
        if (d < curd) {
          curd = d;
          cur = u;
          changed = true;
        }
      }
    }
  }

  // hnswlib's mutuallyConnectNewElement: v keeps up to m heuristic neighbours of L.cands; each of
  // them gets a back link, re-pruned with the heuristic (cap m0 on level 0, m above) when full.
  void connect(uint32_t v, int l, float dup, Local& L) {
    const uint32_t mcur = l ? m : m0;
    select_neighbors(dist, L.cands.data(), L.cands.size(), m, dup, L.sel);
    {
      auto g = guard(v);
      uint32_t* p = list(v, l);
      if (p[0] == 0) {
        write(p, L.sel);
      } else {
        // Another thread reached v through a higher level and linked back to it already: merge.
        L.work = L.sel;
        for (uint32_t j = 1; j <= p[0]; ++j) {
          uint32_t u = p[j];
          bool dupe = u == v;
          for (const Cand& c : L.sel) dupe = dupe || c.id == u;
          if (!dupe) L.work.push_back({dist.to(dist.row(v), u), u});
        }
        std::sort(L.work.begin(), L.work.end(), by_distance);
        if (L.work.size() > mcur) {
          std::vector<Cand> pruned;
          select_neighbors(dist, L.work.data(), L.work.size(), mcur, dup, pruned);
          L.work.swap(pruned);
        }
        write(p, L.work);
      }
    }
    const float* vr = dist.row(v);
    for (const Cand& s : L.sel) {
      uint32_t u = s.id;
      auto g = guard(u);
      uint32_t* p = list(u, l);
      uint32_t cnt = p[0];
      bool present = false;
      for (uint32_t j = 1; j <= cnt; ++j) present = present || p[j] == v;
      if (present) continue;
      if (cnt < mcur) {
        p[1 + cnt] = v;
        p[0] = cnt + 1;
        continue;
      }
      const float* ur = dist.row(u);
      L.work.clear();
      L.work.push_back({dist(ur, vr), v});
      for (uint32_t j = 1; j <= cnt; ++j) L.work.push_back({dist(ur, dist.row(p[j])), p[j]});
      std::sort(L.work.begin(), L.work.end(), by_distance);
      std::vector<Cand>& kept = L.cands;  // free again: L.sel is what we iterate
      select_neighbors(dist, L.work.data(), L.work.size(), mcur, dist.dup_limit(ur), kept);
      write(p, kept);
    }
  }
};

void HnswIndex::clear() {
  m_ = m0_ = efc_ = 0;
  n_ = dim_ = 0;
  entry_ = 0;
  max_level_ = -1;
  std::vector<uint32_t>().swap(level0_);
  std::vector<uint8_t>().swap(levels_);
  std::vector<uint32_t>().swap(upper_first_);
  std::vector<uint32_t>().swap(upper_);
}

void HnswIndex::layout_upper() {
  upper_first_.assign(n_, 0);
  uint64_t blocks = 0;
  for (uint32_t v = 0; v < n_; ++v) {
    upper_first_[v] = uint32_t(blocks);
    blocks += levels_[v];
    if (blocks > UINT32_MAX) throw Error(Code::invalid_argument, "hnsw: too many upper-level nodes");
  }
  upper_.assign(size_t(blocks) * (m_ + 1), 0);
}

void HnswIndex::build(const VectorStore& store, const BuildOptions& opts, std::atomic<uint32_t>& progress) {
  progress = 0;
  clear();
  const size_t n = store.size();
  if (n > kMaxRows) throw Error(Code::invalid_argument, "hnsw: at most 2^31 - 1 rows per segment");
  const uint32_t m = opts.m ? opts.m : kDefaultM;
  if (m < 2 || m > kMaxM) throw Error(Code::invalid_argument, "hnsw: m must be between 2 and " + std::to_string(kMaxM));
  m_ = m;
  m0_ = 2 * m;
  efc_ = std::max(opts.ef_construction ? opts.ef_construction : kDefaultEfConstruction, m);
  dim_ = uint32_t(store.dim());
  n_ = uint32_t(n);
  if (n == 0) {
    progress = 100;
    return;
  }
  try {
    // Levels are drawn up front from the seed, so they do not depend on the insertion schedule.
    levels_.resize(n);
    std::mt19937_64 rng(opts.seed);
    const double mult = 1.0 / std::log(double(m));
    for (size_t i = 0; i < n; ++i) {
      double u = double((rng() >> 11) + 1) * 0x1.0p-53;  // (0, 1]
      levels_[i] = uint8_t(std::min<double>(std::floor(-std::log(u) * mult), kMaxLevel));
    }
    level0_.assign(n * (size_t(m0_) + 1), 0);
    layout_upper();
    entry_ = 0;
    max_level_ = levels_[0];

    uint32_t threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
    threads = uint32_t(std::min<size_t>(threads, std::max<size_t>(1, (n - 1) / 256)));
    Builder b(*this, store, threads > 1);
    std::atomic<uint32_t> next{1}, done{1};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&] {
      try {
        Builder::Local L;
        b.init_local(L);
        while (!failed.load(std::memory_order_relaxed)) {
          uint32_t v = next.fetch_add(1, std::memory_order_relaxed);
          if (v >= n) break;
          b.insert(v, L);
          uint32_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
          uint32_t pct = uint32_t(uint64_t(d) * 100 / n);
          if (pct != uint32_t(uint64_t(d - 1) * 100 / n)) {
            pct = std::min(pct, 99u);
            uint32_t seen = progress.load(std::memory_order_relaxed);
            while (pct > seen && !progress.compare_exchange_weak(seen, pct)) {
            }
          }
        }
      } catch (...) {
        std::lock_guard<std::mutex> g(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    };
    std::vector<std::thread> pool;
    try {
      for (uint32_t t = 1; t < threads; ++t) pool.emplace_back(work);
    } catch (const std::system_error&) {
      // Could not start every thread: the ones running and this one finish the work.
    }
    work();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    Builder::Local L;
    b.init_local(L);
    b.repair(L);
  } catch (...) {
    clear();
    throw;
  }
  progress = 100;
}

// ---------------------------------------------------------------------------------------------
// Snapshot

void HnswIndex::save(Writer& w) const {
  w.u32(kSaveTag);
  w.u32(kSaveVersion);
  w.u32(m_);
  w.u32(m0_);
  w.u32(efc_);
  w.u64(n_);
  w.u32(entry_);
  w.u32(uint32_t(max_level_));  // -1 as 0xFFFFFFFF when empty
  w.vec(level0_);
  w.vec(levels_);
  w.vec(upper_);
}

void HnswIndex::load(Reader& r, const VectorStore& store) {
  clear();
  try {
    if (r.u32() != kSaveTag) corrupt("bad section tag");
    if (uint32_t v = r.u32(); v != kSaveVersion) corrupt("unknown version " + std::to_string(v));
    const uint32_t m = r.u32(), m0 = r.u32(), efc = r.u32();
    const uint64_t n = r.u64();
    const uint32_t entry = r.u32();
    const int32_t max_level = int32_t(r.u32());
    if (m < 2 || m > kMaxM || m0 < 1 || m0 > 2 * kMaxM) corrupt("bad link counts");
    if (n != store.size()) corrupt("node count " + std::to_string(n) + " != store rows " + std::to_string(store.size()));
    if (n > kMaxRows) corrupt("too many nodes");
    m_ = m;
    m0_ = m0;
    efc_ = efc;
    n_ = uint32_t(n);
    dim_ = uint32_t(store.dim());
    level0_ = r.vec<uint32_t>();
    levels_ = r.vec<uint8_t>();
    upper_ = r.vec<uint32_t>();

    if (level0_.size() != n * (uint64_t(m0) + 1)) corrupt("level-0 link array has the wrong size");
    if (levels_.size() != n) corrupt("level array has the wrong size");
    uint64_t blocks = 0;
    for (uint8_t lv : levels_) {
      if (lv > kMaxLevel) corrupt("level out of range");
      blocks += lv;
    }
    if (blocks > UINT32_MAX || upper_.size() != blocks * (uint64_t(m) + 1)) corrupt("upper link array has the wrong size");
    if (n == 0) {
      if (max_level != -1 || entry != 0) corrupt("entry point in an empty graph");
    } else {
      if (entry >= n) corrupt("entry point out of range");
      if (max_level != int32_t(levels_[entry])) corrupt("max level differs from the entry point's level");
    }
    entry_ = entry;
    max_level_ = max_level;
    upper_first_.assign(n, 0);
    uint64_t next = 0;
    for (uint32_t v = 0; v < n_; ++v) {
      upper_first_[v] = uint32_t(next);
      next += levels_[v];
      if (levels_[v] > max_level_) corrupt("node above the entry point's level");
    }
    const size_t stride = size_t(m0) + 1;
    for (uint32_t v = 0; v < n_; ++v) {
      const uint32_t* ll = level0_.data() + size_t(v) * stride;
      if (ll[0] > m0) corrupt("level-0 link count out of range");
      for (uint32_t j = 1; j <= ll[0]; ++j)
        if (ll[j] >= n_) corrupt("level-0 neighbour out of range");
      for (int l = 1; l <= levels_[v]; ++l) {
        const uint32_t* ul = links_upper(v, l);
        if (ul[0] > m) corrupt("upper link count out of range");
        for (uint32_t j = 1; j <= ul[0]; ++j)
          if (ul[j] >= n_ || levels_[ul[j]] < l) corrupt("upper-level neighbour out of range");
      }
    }
  } catch (...) {
    clear();
    throw;
  }
}

size_t HnswIndex::memory_bytes() const {
  return level0_.capacity() * sizeof(uint32_t) + levels_.capacity() + upper_first_.capacity() * sizeof(uint32_t) +
         upper_.capacity() * sizeof(uint32_t);
}

std::unique_ptr<VectorIndex> make_hnsw_index() { return std::make_unique<HnswIndex>(); }

}  // namespace sable
