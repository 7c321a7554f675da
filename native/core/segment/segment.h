// A segment is one partition of a dataset: its vectors, external ids, metadata columns,
// tombstones and (once sealed) its index. A growing segment takes appends and is searched
// exactly; a sealed one is immutable but for tombstones, and is indexed in the background while
// it stays searchable. Readers take a shared lock, writers an exclusive one; an index build runs
// outside the lock and is swapped in when done.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "../columns/column.h"
#include "../index/coarse_lists.h"
#include "../index/index.h"
#include "../codes/vector_store.h"
#include "id_table.h"
#include "writer_first_mutex.h"

namespace sable {

enum class IndexStatus : uint8_t { None = 0, Building = 1, Ready = 2 };
const char* index_status_name(IndexStatus s);

struct SegmentStats {
  size_t rows = 0, live = 0, memory_bytes = 0;
  bool sealed = false;
  IndexType index_type = IndexType::Flat;
  IndexStatus index_status = IndexStatus::None;
  uint32_t progress = 0, nlist = 0, default_nprobe = 0, default_beam_width = 0;
};

// What a segment did for one query, for the search receipt.
struct SegmentReceipt {
  const char* strategy = "none";  // "exact", "index", "widened", "none" (nothing matched)
  size_t rows = 0, matches = 0;
  uint64_t candidates_scored = 0;
  uint32_t nprobe = 0, beam_width = 0;
  // The index's calibrated recall@10 for the knobs asked (1 for an exact scan, -1 unknown).
  float estimated_recall = -1.0f;
};

struct QueryOptions {
  uint32_t k = 10;
  uint32_t nprobe = 0, beam_width = 0, rerank_depth = 0;  // 0: index defaults
  bool exact = false;                                      // force the exact strategy
  // Segments may hold the same id (a bulk load gathering partitions into one copies rows the
  // searched sources still hold): each id is answered once.
  bool distinct = false;
  std::vector<Predicate> predicates;
};

class Segment {
 public:
  Segment(size_t dim, Metric metric) : store_(dim, metric) {}

  size_t dim() const { return store_.dim(); }
  Metric metric() const { return store_.metric(); }

  // Room for `rows` appended rows without reallocation (growing segments; address space only
  // until rows arrive, with glibc's large blocks mapped on their own).
  void reserve(size_t rows);
  // Growing segments only. Ids must not be live in this segment (remove them first).
  void append(const int64_t* ids, const float* vectors, size_t n, const std::vector<ColumnBatch>& columns);
  // Tombstones the live rows holding these ids; returns how many were live.
  size_t remove(const int64_t* ids, size_t n);
  // 1 for each id live in this segment, else 0.
  std::vector<uint8_t> contains(const int64_t* ids, size_t n) const;
  // 1 for each id live here whose row satisfies every predicate (hybrid keyword candidates).
  std::vector<uint8_t> match(const int64_t* ids, size_t n, const std::vector<Predicate>& preds) const;
  // User-facing score of each id's row against a raw query; NaN where the id is not live here.
  std::vector<float> score(const int64_t* ids, size_t n, const float* query) const;
  // Seals the segment (no more appends) and builds its index; blocks the caller, not readers.
  // An `extended` segment's seed index of the same type takes the rows it lacks instead, when it
  // can; returns whether it did (else the index was trained anew).
  bool build(IndexType type, const BuildOptions& opts);
  void seal();
  // A sealed segment waiting for a `sable` build keeps its rows as that index will (half
  // precision where harmless) while it waits: a bulk load seals partitions faster than they are
  // indexed, and float rows waiting in line would hold twice the memory. The build reads them
  // as they are, a block at a time. Returns whether the rows are half precision now.
  bool compact_rows_for(IndexType planned);

  // Until this segment has an index of its own, its searches scan the rows of the lists of
  // `source`'s index nearest the query (coarse_lists.h) once it holds kListedMinRows rows.
  // Returns whether it took them: not when either has none to give or take, nor twice.
  bool adopt_lists(const Segment& source);
  static constexpr size_t kListedMinRows = 4096;
  // Searches one prepared-by-caller raw query; pushes (internal distance, external id).
  void search(const float* query, const QueryOptions& q, TopKOf<int64_t>& out, SegmentReceipt& receipt) const;
  // The same for nq queries at once (row-major) when this segment would scan every row for each
  // of them (no index yet, or an exact search): the rows are read in blocks that stay in cache
  // while every query scores them, instead of once per query, and predicates are evaluated once.
  // Returns false, having done nothing, when the segment would take another strategy; the caller
  // then searches per query.
  bool search_exact_batch(const float* queries, size_t nq, const QueryOptions& q, TopKOf<int64_t>* outs,
                          SegmentReceipt* receipts) const;

  SegmentStats stats() const;
  size_t live_rows() const;
  std::vector<int64_t> live_ids() const;
  // Ids in row order, tombstoned rows included (to rebuild columns row by row).
  std::vector<int64_t> row_ids() const;
  // Name and type of each column.
  std::vector<std::pair<std::string, ColumnType>> column_types() const;
  // Replaces every column with batches covering all rows (a schema change), atomically for readers.
  // `rows` is the row count the batches were built for; it must still be the segment's.
  void replace_columns(const std::vector<ColumnBatch>& columns, size_t rows);
  // Copies the live rows of `sources` into this (growing) segment: compaction. Half rows stay
  // half in an empty segment or one already half (see VectorStore::append_row_of).
  void append_live_rows_of(const Segment& source);
  // A sealed segment of this one's live rows with its index, rows dropped from the index without
  // a new build (VectorIndex::keep_rows); without an index (status None) when this one has none
  // ready or its type cannot drop rows. Rewriting a partition without its deleted rows this way
  // costs a copy, where a build trains and encodes again.
  std::shared_ptr<Segment> live_copy() const;
  // A sealed, unindexed segment of this one's live rows, then the live rows of `sources`, holding
  // this one's index (live_copy's) as the seed its build extends (VectorIndex::with_rows_appended):
  // a small partition joins a large one for the cost of encoding its rows, where a merge trains
  // anew. Only copies: the caller holds the dataset's write turn meanwhile.
  std::shared_ptr<Segment> extended(const std::vector<std::shared_ptr<Segment>>& sources) const;

  // Makes the live rows exactly the rows of `members` (the engine's record of what this segment
  // holds): live rows outside it are tombstoned. `missing` counts members with no live row here,
  // which means the segment lacks rows it should hold.
  struct Reconciled {
    size_t removed = 0, missing = 0;
  };
  Reconciled reconcile(const int64_t* members, size_t n);

  // Snapshot of vectors, ids, tombstones, columns and the index.
  // Returns the snapshot's checksum; load refuses a file whose checksum is not `expected` (when
  // given), so a valid snapshot of another partition or an older one is never taken for this one.
  uint64_t save(const std::string& path) const;
  static std::shared_ptr<Segment> load(const std::string& path, const uint64_t* expected = nullptr);

 private:
  void search_locked(const float* prepared, const QueryOptions& q, TopKOf<int64_t>& out, SegmentReceipt& receipt) const;
  // The live rows of [0, rows) that `predicates` pass (the caller holds mu_).
  Bitset passing(const std::vector<Predicate>& predicates, size_t rows) const;

  mutable WriterFirstMutex mu_;
  // Taken (before mu_) by whatever changes the rows, ids, columns or index, and held shared by a
  // snapshot's save while it writes them without mu_; removals take mu_ only.
  mutable std::shared_mutex structure_mu_;
  // Both locks, as a change of the rows, ids, columns or index takes them.
  struct Reshaping {
    explicit Reshaping(const Segment& s) : shape(s.structure_mu_), rows(s.mu_) {}
    void unlock() {
      rows.unlock();
      shape.unlock();
    }
    std::unique_lock<std::shared_mutex> shape;
    std::unique_lock<WriterFirstMutex> rows;
  };
  VectorStore store_;
  std::vector<int64_t> ids_;
  IdTable row_of_;
  Bitset tombstones_;
  Bitset live_;  // complement of tombstones_, kept so an unfiltered search needs no copy
  size_t tombstone_count_ = 0;
  Columns columns_;
  bool sealed_ = false;
  IndexType index_type_ = IndexType::Flat;
  std::atomic<IndexStatus> index_status_{IndexStatus::None};
  std::atomic<uint32_t> progress_{0};
  std::shared_ptr<const VectorIndex> index_;
  // Lists borrowed from another segment's index until this one has its own (adopt_lists).
  std::shared_ptr<CoarseLists> coarse_;
  // Whether a search with these options, over `rows` rows, scans the borrowed lists.
  bool listed(const QueryOptions& q, size_t rows) const;
  // The listed search; false when it cannot reach enough matches (the caller scans exactly).
  bool search_listed(const float* prepared, const QueryOptions& q, const Bitset* allow, size_t rows, size_t matches,
                     TopK& local, SegmentReceipt& receipt) const;
  // An index over the first rows that the next build extends (see extended()); never searched.
  std::shared_ptr<const VectorIndex> seed_;
};

}  // namespace sable
