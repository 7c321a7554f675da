#include "segment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "../io.h"
#include "../memory.h"
#include "../priority.h"
#include "../index/exact_batch.h"

namespace sable {

const char* index_status_name(IndexStatus s) {
  switch (s) {
    case IndexStatus::None: return "none";
    case IndexStatus::Building: return "building";
    case IndexStatus::Ready: return "ready";
  }
  return "none";
}

void Segment::reserve(size_t rows) {
  Reshaping lock(*this);
  if (sealed_) return;
  store_.reserve(rows);
  ids_.reserve(rows);
}

void Segment::append(const int64_t* ids, const float* vectors, size_t n, const std::vector<ColumnBatch>& columns) {
  Reshaping lock(*this);
  if (sealed_) throw Error(Code::segment_sealed, "cannot append to a sealed segment");
  const size_t before = ids_.size();
  ids_.insert(ids_.end(), ids, ids + n);
  for (size_t i = 0; i < n; ++i) {
    if (row_of_.contains(ids[i], ids_)) {
      for (size_t j = 0; j < i; ++j) row_of_.erase(ids[j], ids_);
      ids_.resize(before);
      throw Error(Code::invalid_argument, "id " + std::to_string(ids[i]) + " is already live in this segment");
    }
    row_of_.insert(ids[i], uint32_t(before + i), ids_);
  }
  columns_.append(columns, before, n);
  store_.append(vectors, n);
  tombstones_.resize(before + n, false);
  live_.resize(before + n, true);
}

size_t Segment::remove(const int64_t* ids, size_t n) {
  std::unique_lock lock(mu_);
  size_t removed = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t row = row_of_.erase(ids[i], ids_);
    if (row == IdTable::kAbsent) continue;
    tombstones_.set(row);
    live_.reset(row);
    ++tombstone_count_;
    ++removed;
  }
  return removed;
}

std::vector<uint8_t> Segment::contains(const int64_t* ids, size_t n) const {
  std::shared_lock lock(mu_);
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = row_of_.contains(ids[i], ids_) ? 1 : 0;
  return out;
}

std::vector<uint8_t> Segment::match(const int64_t* ids, size_t n, const std::vector<Predicate>& preds) const {
  std::shared_lock lock(mu_);
  std::vector<uint8_t> out(n, 0);
  Bitset pass;
  if (!preds.empty()) pass = columns_.evaluate(preds, ids_.size());
  for (size_t i = 0; i < n; ++i) {
    const uint32_t row = row_of_.find(ids[i], ids_);
    if (row != IdTable::kAbsent && (preds.empty() || pass.test(row))) out[i] = 1;
  }
  return out;
}

std::vector<float> Segment::score(const int64_t* ids, size_t n, const float* query) const {
  std::shared_lock lock(mu_);
  std::vector<float> prepared(store_.dim());
  store_.prepare_query(query, prepared.data());
  std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
  for (size_t i = 0; i < n; ++i) {
    const uint32_t row = row_of_.find(ids[i], ids_);
    if (row != IdTable::kAbsent) out[i] = score_from_distance(store_.metric(), store_.distance(prepared.data(), row));
  }
  return out;
}

void Segment::seal() {
  Reshaping lock(*this);
  if (!sealed_) {
    store_.shrink_to_fit();
    ids_.shrink_to_fit();
  }
  sealed_ = true;
}

bool Segment::compact_rows_for(IndexType planned) {
  std::vector<uint16_t> halves;
  std::vector<float> inv_norms;
  {
    // Sealed rows no longer change (a removal marks a tombstone under mu_ alone), so they are
    // narrowed holding off only builds and other reshaping: a write that looks this segment up
    // meanwhile (the HTTP thread, during a bulk load) waits for the swap, not the conversion.
    std::shared_lock shape(structure_mu_);
    if (!sealed_) throw Error(Code::invalid_argument, "only a sealed segment's rows are compacted");
    if (store_.is_half() || index_status_ != IndexStatus::None || planned != IndexType::Sable) return store_.is_half();
    if (store_.metric() != Metric::Cosine && !store_.fits_f16_exactly()) return false;
    halves = store_.narrowed();
    inv_norms = store_.inverse_norms_of(halves);
  }
  Reshaping lock(*this);
  // A build begun meanwhile reads the float rows without a lock: they stay.
  if (store_.is_half() || index_status_ != IndexStatus::None) return store_.is_half();
  store_.assign_halves(std::move(halves), std::move(inv_norms));
  store_.shrink_to_fit();
  lock.unlock();
  release_free_memory();
  return true;
}

bool Segment::build(IndexType type, const BuildOptions& opts) {
  bool extended = false;
  {
    Reshaping lock(*this);
    if (index_status_ == IndexStatus::Building) throw Error(Code::index_building, "an index build is already running on this segment");
    if (!sealed_) {
      // Last chance to move rows: nothing holds pointers into the store before its first index.
      store_.shrink_to_fit();
      ids_.shrink_to_fit();
    }
    sealed_ = true;
    index_status_ = IndexStatus::Building;
    progress_ = 0;
  }
  try {
    // The store is immutable once sealed, so the build reads it without the lock. A sable build
    // reads half rows a block at a time; other indexes keep float rows, so a half store (a sable
    // segment rebuilt as another type) is widened first, and searches of the old index wait for that.
    if (store_.is_half() && type != IndexType::Sable) {
      Reshaping lock(*this);
      store_.to_f32();
    }
    std::unique_ptr<VectorIndex> index;
    run_at_background_priority([&] {
      if (seed_ && seed_->type() == type) index = seed_->with_rows_appended(store_, opts);
      extended = index != nullptr;
      if (extended) return;
      index = make_index(type);
      index->build(store_, opts, progress_);
    });
    Reshaping lock(*this);
    seed_.reset();
    coarse_.reset();
    index_ = std::move(index);
    index_type_ = type;
    // Cosine rows are unit vectors: half precision keeps them to about 5e-4 absolute. L2 and IP
    // rows of any magnitude keep float32 (exact distances), unless half precision holds them exactly.
    if (type == IndexType::Sable && (store_.metric() == Metric::Cosine || store_.fits_f16_exactly())) store_.to_f16();
    index_status_ = IndexStatus::Ready;
    progress_ = 100;
    lock.unlock();
    release_free_memory();
  } catch (...) {
    index_status_ = index_ ? IndexStatus::Ready : IndexStatus::None;
    throw;
  }
  return extended;
}

void Segment::search(const float* query, const QueryOptions& q, TopKOf<int64_t>& out, SegmentReceipt& receipt) const {
  std::shared_lock lock(mu_);
  std::vector<float> prepared(store_.dim());
  store_.prepare_query(query, prepared.data());
  search_locked(prepared.data(), q, out, receipt);
}

Bitset Segment::passing(const std::vector<Predicate>& predicates, size_t rows) const {
  Bitset pass = columns_.evaluate(predicates, rows);
  if (tombstone_count_) pass.and_not(tombstones_);
  return pass;
}

bool Segment::search_exact_batch(const float* queries, size_t nq, const QueryOptions& q, TopKOf<int64_t>* outs,
                                 SegmentReceipt* receipts) const {
  size_t rows, matches;
  std::vector<float> prepared;
  // With predicates, the rows they pass (tombstones removed) as of the batch's start.
  Bitset filtered;
  const bool filtering = !q.predicates.empty();
  {
    std::shared_lock lock(mu_);
    const bool indexed = index_status_ == IndexStatus::Ready && index_ && index_type_ != IndexType::Flat;
    if (indexed && !q.exact) return false;
    rows = ids_.size();
    if (!indexed && listed(q, rows)) return false;
    matches = rows - tombstone_count_;
    if (filtering && rows > 0) {
      filtered = passing(q.predicates, rows);
      matches = filtered.count();
    }
    const size_t dim = store_.dim();
    prepared.resize(nq * dim);
    for (size_t i = 0; i < nq; ++i) store_.prepare_query(queries + i * dim, prepared.data() + i * dim);
  }
  for (size_t i = 0; i < nq; ++i) receipts[i].rows = rows, receipts[i].matches = q.k ? matches : 0;
  if (rows == 0 || q.k == 0 || matches == 0) return true;
  std::vector<TopK> local(nq, TopK(q.k));
  // The lock is taken per range of rows, so an append or a removal on the HTTP thread waits for
  // one range of this batch, not all of it. Rows only ever join a segment's end, and the
  // tombstones a range reads are those of its moment, as for any search beside a removal.
  const uint32_t range = uint32_t(std::max<size_t>(256, (size_t(1) << 22) / std::max<size_t>(1, nq * store_.dim())));
  for (uint32_t r0 = 0; r0 < rows; r0 += range) {
    std::shared_lock lock(mu_);
    const Bitset* allow = filtering ? &filtered : tombstone_count_ ? &live_ : nullptr;
    exact_scan_batch(store_, prepared.data(), nq, allow, local.data(), r0,
                     uint32_t(std::min<size_t>(rows, size_t(r0) + range)));
  }
  std::shared_lock lock(mu_);
  for (size_t i = 0; i < nq; ++i) {
    receipts[i].strategy = "exact";
    receipts[i].estimated_recall = 1.0f;
    receipts[i].candidates_scored = matches;
    for (const auto& e : local[i].take_sorted()) outs[i].merge_push(e.distance, ids_[e.label]);
  }
  return true;
}

void Segment::search_locked(const float* query, const QueryOptions& q, TopKOf<int64_t>& out,
                            SegmentReceipt& receipt) const {
  size_t rows = ids_.size();
  receipt.rows = rows;
  if (rows == 0 || q.k == 0) return;

  Bitset filtered;
  const Bitset* allow = tombstone_count_ ? &live_ : nullptr;
  size_t matches = rows - tombstone_count_;
  if (!q.predicates.empty()) {
    filtered = passing(q.predicates, rows);
    allow = &filtered;
    matches = filtered.count();
  }
  receipt.matches = matches;
  if (matches == 0) return;

  TopK local(q.k);
  SearchStats stats;
  double selectivity = double(matches) / double(rows);
  bool indexed = index_status_ == IndexStatus::Ready && index_ && index_type_ != IndexType::Flat;
  uint32_t nlist = indexed ? index_->nlist() : 0;
  uint32_t nprobe = indexed ? (q.nprobe ? q.nprobe : index_->default_nprobe()) : 0;
  uint32_t beam = indexed ? (q.beam_width ? q.beam_width : index_->default_beam_width()) : 0;
  // A filter passes about `selectivity` of what an inverted-list scan meets: probe more lists so
  // the surviving candidates stay what the unfiltered knobs would give.
  if (indexed && selectivity < 0.999 && index_->widens_nprobe_for_filters())
    nprobe = uint32_t(std::ceil(nprobe / selectivity));
  // Exact when there is no index, when asked, or when scoring the matches costs less than the
  // filtered traversal.
  bool exact = q.exact || !indexed ||
               double(matches) <= index_->estimated_filtered_cost(q.k, nlist ? std::min(nprobe, nlist) : nprobe, beam, rows,
                                                                  selectivity);
  if (!indexed && listed(q, rows) && search_listed(query, q, allow, rows, matches, local, receipt)) {
    stats.candidates_scored = receipt.candidates_scored;
  } else if (exact) {
    exact_scan(store_, query, allow, local, stats);
    receipt.strategy = "exact";
    receipt.estimated_recall = 1.0f;
  } else {
    // Of the unfiltered search these knobs stand for (the widening keeps what reaches the scan).
    receipt.estimated_recall = index_->estimated_recall(q.nprobe);
    SearchParams p;
    p.k = q.k;
    p.allow = allow;
    p.rerank_depth = q.rerank_depth;
    p.asked_nprobe = q.nprobe ? q.nprobe : index_->default_nprobe();
    size_t want = std::min<size_t>(q.k, matches);
    receipt.strategy = "index";
    for (int attempt = 0;; ++attempt) {
      p.nprobe = nlist ? std::min(nprobe, nlist) : nprobe;
      p.beam_width = beam;
      TopK attempt_out(q.k);
      index_->search(store_, query, p, attempt_out, stats);
      if (attempt_out.size() >= want) {
        local = std::move(attempt_out);
        break;
      }
      if (attempt == 2) {
        // The traversal cannot reach enough matches: score them all, never return fewer than k.
        exact_scan(store_, query, allow, local, stats);
        receipt.strategy = "exact";
        receipt.estimated_recall = 1.0f;
        break;
      }
      nprobe *= 4;
      beam *= 4;
      receipt.strategy = "widened";
    }
    receipt.nprobe = p.nprobe;
    receipt.beam_width = p.beam_width;
  }
  receipt.candidates_scored = stats.candidates_scored;
  for (const auto& e : local.take_sorted()) out.merge_push(e.distance, ids_[e.label]);
}

bool Segment::adopt_lists(const Segment& source) {
  if (&source == this || source.dim() != dim() || source.metric() != metric()) return false;
  std::vector<float> centroids;
  uint64_t lists_id = 0;
  uint32_t nprobe = 0;
  float recall = -1.0f;
  {
    std::shared_lock lock(source.mu_);
    if (source.index_status_ != IndexStatus::Ready || !source.index_) return false;
    centroids = source.index_->list_centroids();
    lists_id = source.index_->lend_lists();
    nprobe = source.index_->default_nprobe();
    recall = source.index_->estimated_recall(0);
  }
  if (centroids.empty()) return false;
  // The source's own lists: its default was calibrated for the recall of its codes, and a listed
  // row is scored exactly, which ranks at least as well. Twice as many cost the soak's searches
  // 1,000 more exact distances each (ip_f32 was a fifth of the search threads' time).
  auto lists = std::make_shared<CoarseLists>(std::move(centroids), lists_id, dim(), metric(), std::max<uint32_t>(2, nprobe), recall);
  std::unique_lock lock(mu_);
  if (coarse_ || index_status_ == IndexStatus::Ready) return false;
  coarse_ = std::move(lists);
  return true;
}

bool Segment::listed(const QueryOptions& q, size_t rows) const {
  return coarse_ && !q.exact && rows >= std::max<size_t>(kListedMinRows, size_t(4) * coarse_->nlist());
}

bool Segment::search_listed(const float* prepared, const QueryOptions& q, const Bitset* allow, size_t rows,
                            size_t matches, TopK& local, SegmentReceipt& receipt) const {
  CoarseLists& lists = *coarse_;
  lists.catch_up(store_, uint32_t(rows));
  const uint32_t nlist = lists.nlist();
  // Two lists at least: a row on the border of two lists is in one of the query's two nearest.
  uint32_t nprobe = std::max<uint32_t>(2, q.nprobe ? q.nprobe : lists.default_nprobe());
  const double selectivity = double(matches) / double(rows);
  if (selectivity < 0.999) nprobe = uint32_t(std::min<double>(nlist, std::ceil(nprobe / selectivity)));
  // The lists' cost: ranking them, then the allowed share of their rows; an exact scan of a
  // filter's few matches costs less.
  if (double(matches) <= nlist + double(std::min(nprobe, nlist)) / nlist * double(rows) * selectivity) return false;
  const size_t want = std::min<size_t>(q.k, matches);
  for (int attempt = 0; attempt < 3; ++attempt, nprobe = std::min(nlist, nprobe * 4)) {
    TopK out(q.k);
    const size_t scored = lists.search(store_, prepared, nprobe, allow, uint32_t(rows), out);
    if (out.size() < want && nprobe < nlist) continue;
    local = std::move(out);
    receipt.strategy = attempt ? "widened" : "index";
    receipt.nprobe = std::min(nprobe, nlist);
    receipt.candidates_scored = scored;
    receipt.estimated_recall = lists.estimated_recall();
    return true;
  }
  return false;
}

SegmentStats Segment::stats() const {
  std::shared_lock lock(mu_);
  SegmentStats s;
  s.rows = ids_.size();
  s.live = ids_.size() - tombstone_count_;
  s.sealed = sealed_;
  s.index_type = index_type_;
  s.index_status = index_status_;
  s.progress = progress_;
  s.memory_bytes = store_.memory_bytes() + ids_.size() * 8 + row_of_.memory_bytes() + columns_.memory_bytes() +
                   tombstones_.words().capacity() * 16 + (index_ ? index_->memory_bytes() : 0) +
                   (coarse_ ? coarse_->memory_bytes() : 0);
  if (index_) {
    s.nlist = index_->nlist();
    s.default_nprobe = index_->default_nprobe();
    s.default_beam_width = index_->default_beam_width();
  }
  return s;
}

std::vector<int64_t> Segment::live_ids() const {
  std::shared_lock lock(mu_);
  std::vector<int64_t> out;
  out.reserve(ids_.size() - tombstone_count_);
  for (size_t r = 0; r < ids_.size(); ++r)
    if (!tombstones_.test(r)) out.push_back(ids_[r]);
  return out;
}

std::vector<int64_t> Segment::row_ids() const {
  std::shared_lock lock(mu_);
  return ids_;
}

std::vector<std::pair<std::string, ColumnType>> Segment::column_types() const {
  std::shared_lock lock(mu_);
  std::vector<std::pair<std::string, ColumnType>> out;
  for (const auto& [name, col] : columns_.all()) out.emplace_back(name, col.type());
  return out;
}

void Segment::replace_columns(const std::vector<ColumnBatch>& columns, size_t rows) {
  Columns fresh;
  Reshaping lock(*this);
  if (rows != ids_.size()) throw Error(Code::invalid_argument, "the segment changed while its columns were rebuilt");
  fresh.append(columns, 0, rows);
  columns_ = std::move(fresh);
}

void Segment::append_live_rows_of(const Segment& src) {
  std::shared_lock src_lock(src.mu_);
  Reshaping lock(*this);
  if (sealed_) throw Error(Code::segment_sealed, "cannot append to a sealed segment");
  if (src.store_.dim() != store_.dim() || src.store_.metric() != store_.metric())
    throw Error(Code::invalid_argument, "segments of different shapes cannot be merged");
  size_t before = ids_.size();
  for (const auto& [name, col] : src.columns_.all()) {
    auto [it, created] = columns_.all().try_emplace(name, col.type());
    if (created) it->second.append_nulls(before);
    if (it->second.type() != col.type()) throw Error(Code::invalid_argument, "column '" + name + "' differs in type");
  }
  size_t added = 0;
  for (size_t r = 0; r < src.ids_.size(); ++r) {
    if (src.tombstones_.test(r) || row_of_.contains(src.ids_[r], ids_)) continue;
    store_.append_row_of(src.store_, uint32_t(r));
    ids_.push_back(src.ids_[r]);
    row_of_.insert(src.ids_[r], uint32_t(ids_.size() - 1), ids_);
    for (auto& [name, col] : columns_.all()) {
      auto it = src.columns_.all().find(name);
      if (it == src.columns_.all().end()) col.append_nulls(1);
      else col.append_row(it->second, uint32_t(r));
    }
    ++added;
  }
  tombstones_.resize(before + added, false);
  live_.resize(before + added, true);
}

std::shared_ptr<Segment> Segment::live_copy() const {
  std::shared_lock lock(mu_);
  auto out = std::make_shared<Segment>(store_.dim(), store_.metric());
  std::vector<uint32_t> kept;
  kept.reserve(ids_.size() - tombstone_count_);
  for (size_t r = 0; r < ids_.size(); ++r)
    if (!tombstones_.test(r)) kept.push_back(uint32_t(r));
  out->store_ = store_.keep_rows(kept);
  out->ids_.reserve(kept.size());
  for (uint32_t r : kept) {
    out->ids_.push_back(ids_[r]);
    out->row_of_.insert(ids_[r], uint32_t(out->ids_.size() - 1), out->ids_);
  }
  for (const auto& [name, col] : columns_.all()) {
    Column& copy = out->columns_.all().try_emplace(name, col.type()).first->second;
    for (uint32_t r : kept) copy.append_row(col, r);
  }
  out->tombstones_.resize(kept.size(), false);
  out->live_.resize(kept.size(), true);
  out->sealed_ = true;
  if (index_ && index_status_ == IndexStatus::Ready) {
    out->index_ = index_->keep_rows(kept, out->store_);
    if (out->index_) {
      out->index_type_ = index_type_;
      out->index_status_ = IndexStatus::Ready;
      out->progress_ = 100;
    }
  }
  return out;
}

size_t Segment::live_rows() const {
  std::shared_lock lock(mu_);
  return ids_.size() - tombstone_count_;
}

std::shared_ptr<Segment> Segment::extended(const std::vector<std::shared_ptr<Segment>>& sources) const {
  std::shared_ptr<Segment> out = live_copy();
  // Rows join in the base's precision (a half source stays half, so a large base is never
  // widened whole); the whole size at once, not doubling as rows arrive.
  out->sealed_ = false;
  size_t rows = out->ids_.size();
  for (const auto& src : sources) rows += src->live_rows();
  out->store_.reserve(rows);
  out->ids_.reserve(rows);
  for (const auto& src : sources) out->append_live_rows_of(*src);
  out->store_.shrink_to_fit();
  out->ids_.shrink_to_fit();
  out->sealed_ = true;
  out->seed_ = std::move(out->index_);
  out->index_status_ = IndexStatus::None;
  out->progress_ = 0;
  return out;
}

Segment::Reconciled Segment::reconcile(const int64_t* members, size_t n) {
  std::unique_lock lock(mu_);
  Reconciled out;
  Bitset kept(ids_.size());
  for (size_t i = 0; i < n; ++i) {
    const uint32_t row = row_of_.find(members[i], ids_);
    if (row == IdTable::kAbsent) ++out.missing;
    else kept.set(row);
  }
  for (size_t r = 0; r < ids_.size(); ++r) {
    if (tombstones_.test(r) || kept.test(r)) continue;
    row_of_.erase(ids_[r], ids_);
    tombstones_.set(r);
    live_.reset(r);
    ++tombstone_count_;
    ++out.removed;
  }
  return out;
}

uint64_t Segment::save(const std::string& path) const {
  // Rows, ids, columns and the index are held still by the structure lock alone, so removals
  // (which take mu_ only) go on while the file is written and synced: a delete that met a
  // partition being saved used to hold the event loop for the whole write. The tombstones are
  // taken as they are now; later ones are in the engine's LMDB record, which a load reconciles.
  std::shared_lock shape(structure_mu_);
  std::vector<uint32_t> tombstoned;
  {
    std::shared_lock lock(mu_);
    tombstoned.reserve(tombstone_count_);
    tombstones_.for_each([&](uint32_t row) { tombstoned.push_back(row); });
  }
  Writer w(path);
  w.u64(store_.dim());
  w.u8(uint8_t(store_.metric()));
  w.vec(ids_);
  w.u8(store_.is_half() ? 1 : 0);
  w.u64(ids_.size() * store_.dim());
  if (store_.is_half()) w.bytes(store_.halves(), ids_.size() * store_.dim() * sizeof(uint16_t));
  else w.bytes(store_.data(), ids_.size() * store_.dim() * sizeof(float));
  columns_.save(w);
  w.vec(tombstoned);
  bool indexed = index_ && index_status_ == IndexStatus::Ready;
  w.u8(indexed ? 1 : 0);
  if (indexed) {
    w.u8(uint8_t(index_type_));
    index_->save(w);
  }
  return w.commit();
}

std::shared_ptr<Segment> Segment::load(const std::string& path, const uint64_t* expected) {
  Reader r(path);
  if (expected && r.stored_checksum() != *expected)
    throw Error(Code::snapshot_corrupt, "snapshot " + path + " is not the one this partition wrote (another checksum)");
  size_t dim = r.u64();
  uint8_t metric = r.u8();
  if (dim == 0 || dim > 65536 || metric > uint8_t(Metric::Cosine)) throw Error(Code::snapshot_corrupt, "snapshot header is invalid");
  auto seg = std::make_shared<Segment>(dim, Metric(metric));
  seg->ids_ = r.vec<int64_t>();
  const uint8_t half = r.u8();
  if (half > 1) throw Error(Code::snapshot_corrupt, "snapshot vector precision is invalid");
  size_t rows = seg->ids_.size();
  if (half) {
    std::vector<uint16_t> halves = r.vec<uint16_t>();
    if (halves.size() != rows * dim) throw Error(Code::snapshot_corrupt, "snapshot vector block has a wrong size");
    seg->store_.assign_halves(std::move(halves));
  } else {
    std::vector<float> data = r.vec<float>();
    if (data.size() != rows * dim) throw Error(Code::snapshot_corrupt, "snapshot vector block has a wrong size");
    seg->store_.assign(std::move(data));
  }
  seg->columns_.load(r, rows);
  seg->tombstones_.resize(rows, false);
  seg->live_.resize(rows, true);
  // Version 2 kept no tombstones: the engine reconciles such a segment with LMDB after loading.
  if (r.version() >= 3) {
    for (uint32_t row : r.vec<uint32_t>()) {
      if (row >= rows || seg->tombstones_.test(row)) throw Error(Code::snapshot_corrupt, "snapshot tombstones are invalid");
      seg->tombstones_.set(row);
      seg->live_.reset(row);
      ++seg->tombstone_count_;
    }
  }
  // A deleted id may come back in a later row of the same segment; only live rows are findable.
  for (size_t i = 0; i < rows; ++i) {
    if (seg->tombstones_.test(i)) continue;
    if (seg->row_of_.contains(seg->ids_[i], seg->ids_)) throw Error(Code::snapshot_corrupt, "snapshot holds duplicate ids");
    seg->row_of_.insert(seg->ids_[i], uint32_t(i), seg->ids_);
  }
  seg->sealed_ = true;
  if (r.u8()) {
    uint8_t t = r.u8();
    if (t > uint8_t(IndexType::Sable)) throw Error(Code::snapshot_corrupt, "snapshot names an unknown index type");
    auto index = make_index(IndexType(t));
    index->load(r, seg->store_);
    seg->index_ = std::move(index);
    seg->index_type_ = IndexType(t);
    seg->index_status_ = IndexStatus::Ready;
    seg->progress_ = 100;
  }
  if (!r.at_end()) throw Error(Code::snapshot_corrupt, "snapshot has trailing bytes");
  return seg;
}

}  // namespace sable
