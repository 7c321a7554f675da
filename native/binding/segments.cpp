// Segment entry points. Segments live in one process-wide registry keyed by integer handles, so
// every worker thread (each its own N-API environment) reaches the same in-memory index: no copy
// per worker. Long work (index builds, snapshots, batches) runs on AsyncWorkers.
#include <cmath>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <unordered_map>

#include "env.h"
#include "task.h"
#include "kernels/kernels.h"
#include "index/index.h"
#include "segment/multi_search.h"

namespace sable::binding {

namespace {

std::mutex registry_mu;
std::unordered_map<uint32_t, std::shared_ptr<Segment>> registry;
uint32_t next_handle = 1;

uint32_t register_segment(std::shared_ptr<Segment> seg) {
  std::lock_guard lock(registry_mu);
  uint32_t h = next_handle++;
  registry.emplace(h, std::move(seg));
  return h;
}

std::shared_ptr<Segment> segment_of(uint32_t h) {
  std::lock_guard lock(registry_mu);
  auto it = registry.find(h);
  if (it == registry.end()) throw sable::Error(Code::segment_not_found, "segment handle " + std::to_string(h) + " is not open");
  return it->second;
}

std::vector<std::shared_ptr<Segment>> segments_arg(const Napi::CallbackInfo& info, size_t i) {
  if (!info[i].IsArray()) throw sable::Error(Code::invalid_argument, "segments must be an array of handles");
  Napi::Array arr = info[i].As<Napi::Array>();
  std::vector<std::shared_ptr<Segment>> out;
  for (uint32_t j = 0; j < arr.Length(); ++j) {
    Napi::Value v = arr.Get(j);
    if (!v.IsNumber()) throw sable::Error(Code::invalid_argument, "segment handles are numbers");
    out.push_back(segment_of(v.As<Napi::Number>().Uint32Value()));
  }
  size_t dim = out.empty() ? 0 : out.front()->dim();
  for (auto& s : out)
    if (s->dim() != dim || s->metric() != out.front()->metric())
      throw sable::Error(Code::invalid_argument, "segments of one search must share dim and metric");
  return out;
}

std::vector<int64_t> ids_arg(const Napi::CallbackInfo& info, size_t i) {
  if (!info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw sable::Error(Code::invalid_argument, "ids must be a Float64Array");
  Napi::Float64Array a = info[i].As<Napi::Float64Array>();
  std::vector<int64_t> ids(a.ElementLength());
  for (size_t j = 0; j < ids.size(); ++j) {
    double v = a[j];
    if (!(v >= -9007199254740991.0 && v <= 9007199254740991.0) || v != double(int64_t(v)))
      throw sable::Error(Code::invalid_argument, "ids must be safe integers");
    ids[j] = int64_t(v);
  }
  return ids;
}

Napi::Float64Array id_array(Napi::Env env, const std::vector<int64_t>& ids) {
  Napi::Float64Array out = Napi::Float64Array::New(env, ids.size());
  for (size_t i = 0; i < ids.size(); ++i) out[i] = double(ids[i]);
  return out;
}

Napi::Uint8Array mask_array(Napi::Env env, const std::vector<uint8_t>& mask) {
  Napi::Uint8Array out = Napi::Uint8Array::New(env, mask.size());
  std::copy(mask.begin(), mask.end(), out.Data());
  return out;
}

uint32_t opt_u32(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return 0;
  if (!v.IsNumber()) throw sable::Error(Code::invalid_argument, std::string(key) + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 1e9)) throw sable::Error(Code::invalid_argument, std::string(key) + " is out of range");
  return uint32_t(d);
}

QueryOptions query_options(const Napi::Value& value) {
  QueryOptions q;
  if (!value.IsObject()) return q;
  Napi::Object o = value.As<Napi::Object>();
  q.k = opt_u32(o, "k");
  q.nprobe = opt_u32(o, "nprobe");
  q.beam_width = opt_u32(o, "beamWidth");
  q.rerank_depth = opt_u32(o, "rerankDepth");
  q.exact = o.Get("exact").ToBoolean();
  q.distinct = o.Get("distinct").ToBoolean();
  Napi::Value preds = o.Get("predicates");
  if (preds.IsArray()) {
    Napi::Array arr = preds.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Object p = arr.Get(i).As<Napi::Object>();
      Predicate pred;
      pred.column = p.Get("column").ToString().Utf8Value();
      pred.op = parse_predicate_op(p.Get("op").ToString().Utf8Value());
      Napi::Value vals = p.Get("values");
      if (vals.IsArray()) {
        Napi::Array va = vals.As<Napi::Array>();
        for (uint32_t j = 0; j < va.Length(); ++j) pred.values.push_back(va.Get(j).ToNumber().DoubleValue());
      }
      q.predicates.push_back(std::move(pred));
    }
  }
  return q;
}

// A search's options: k is the caller's (the engine's default lives in engine/vocabulary.ts).
QueryOptions search_options(const Napi::Value& value) {
  QueryOptions q = query_options(value);
  if (q.k == 0) throw sable::Error(Code::invalid_argument, "k must be a positive integer");
  return q;
}

// Per-partition receipts only: the engine sums them up (engine/dataset/search.ts, receiptOf),
// once for a search on one thread and for a search fanned out over shards alike.
Napi::Array partition_receipts(Napi::Env env, const std::vector<SegmentReceipt>& segs) {
  Napi::Array parts = Napi::Array::New(env, segs.size());
  for (size_t i = 0; i < segs.size(); ++i) {
    const auto& s = segs[i];
    Napi::Object p = Napi::Object::New(env);
    p.Set("strategy", s.strategy);
    p.Set("rows", double(s.rows));
    p.Set("matches", double(s.matches));
    p.Set("candidates_scored", double(s.candidates_scored));
    p.Set("nprobe", s.nprobe);
    p.Set("beam_width", s.beam_width);
    // Three decimals: the calibration measures it on a few hundred queries.
    const double recall = std::round(double(s.estimated_recall) * 1000) / 1000;
    p.Set("estimated_recall", s.estimated_recall >= 0 ? Napi::Value(Napi::Number::New(env, recall)) : env.Null());
    parts.Set(uint32_t(i), p);
  }
  return parts;
}

Napi::Object result_object(Napi::Env env, const SearchResult& res) {
  Napi::Object out = Napi::Object::New(env);
  Napi::Float64Array ids = Napi::Float64Array::New(env, res.ids.size());
  Napi::Float32Array scores = Napi::Float32Array::New(env, res.scores.size());
  for (size_t i = 0; i < res.ids.size(); ++i) {
    ids[i] = double(res.ids[i]);
    scores[i] = res.scores[i];
  }
  out.Set("ids", ids);
  out.Set("scores", scores);
  out.Set("partitions", partition_receipts(env, res.segments));
  out.Set("isa", isa_name(active_kernels().isa));
  return out;
}

// A batch's answers in columns: one object per query with its receipts cost more than the
// search of a small partition (V8 interns every property name each time); JS reads these as
// NativeBatch (engine/native.ts).
constexpr const char* kStrategies[] = {"none", "exact", "index", "widened"};
constexpr size_t kReceiptFields = 7;

double strategy_code(const char* strategy) {
  for (size_t i = 0; i < std::size(kStrategies); ++i)
    if (std::strcmp(strategy, kStrategies[i]) == 0) return double(i);
  throw sable::Error(Code::internal, std::string("unknown search strategy ") + strategy);
}

Napi::Object batch_object(Napi::Env env, const std::vector<SearchResult>& results) {
  size_t hits = 0, receipts = 0;
  for (const auto& r : results) {
    hits += r.ids.size();
    receipts += r.segments.size();
  }
  Napi::Float64Array ids = Napi::Float64Array::New(env, hits);
  Napi::Float32Array scores = Napi::Float32Array::New(env, hits);
  Napi::Uint32Array offsets = Napi::Uint32Array::New(env, results.size() + 1);
  Napi::Float64Array fields = Napi::Float64Array::New(env, receipts * kReceiptFields);
  size_t at = 0, f = 0;
  offsets[0] = 0;
  for (size_t q = 0; q < results.size(); ++q) {
    const auto& r = results[q];
    for (size_t i = 0; i < r.ids.size(); ++i, ++at) {
      ids[at] = double(r.ids[i]);
      scores[at] = r.scores[i];
    }
    offsets[q + 1] = uint32_t(at);
    for (const auto& s : r.segments) {
      fields[f++] = strategy_code(s.strategy);
      fields[f++] = double(s.rows);
      fields[f++] = double(s.matches);
      fields[f++] = double(s.candidates_scored);
      fields[f++] = s.nprobe;
      fields[f++] = s.beam_width;
      fields[f++] = s.estimated_recall >= 0 ? std::round(double(s.estimated_recall) * 1000) / 1000 : -1;
    }
  }
  Napi::Array strategies = Napi::Array::New(env, std::size(kStrategies));
  for (uint32_t i = 0; i < std::size(kStrategies); ++i) strategies.Set(i, kStrategies[i]);
  Napi::Object out = Napi::Object::New(env);
  out.Set("ids", ids);
  out.Set("scores", scores);
  out.Set("offsets", offsets);
  out.Set("receipts", fields);
  out.Set("strategies", strategies);
  out.Set("isa", isa_name(active_kernels().isa));
  return out;
}

void set(Napi::Env env, Napi::Object exports, const char* name, Napi::Value (*fn)(const Napi::CallbackInfo&)) {
  exports.Set(name, Napi::Function::New(env, fn, name));
}

Napi::Value segment_create(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    uint32_t dim = uint32_arg(info, 0, "dim");
    if (dim == 0 || dim > 65536) throw sable::Error(Code::invalid_argument, "dim must be between 1 and 65536");
    Metric metric = parse_metric(string_arg(info, 1, "metric"));
    auto seg = std::make_shared<Segment>(dim, metric);
    if (info.Length() > 2 && info[2].IsNumber()) seg->reserve(uint32_arg(info, 2, "reserveRows"));
    return Napi::Number::New(info.Env(), register_segment(seg));
  });
}

Napi::Value segment_release(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    uint32_t h = uint32_arg(info, 0, "handle");
    std::lock_guard lock(registry_mu);
    registry.erase(h);
    return info.Env().Undefined();
  });
}

// Column batches of `rows` values each; the typed arrays are read in place.
std::vector<ColumnBatch> columns_arg(const Napi::CallbackInfo& info, size_t i, size_t rows) {
  std::vector<ColumnBatch> columns;
  if (info.Length() <= i || !info[i].IsArray()) return columns;
  Napi::Array arr = info[i].As<Napi::Array>();
  for (uint32_t j = 0; j < arr.Length(); ++j) {
    Napi::Object c = arr.Get(j).As<Napi::Object>();
    ColumnBatch b;
    b.name = c.Get("name").ToString().Utf8Value();
    b.type = parse_column_type(c.Get("type").ToString().Utf8Value());
    Napi::Value values = c.Get("values");
    if (!values.IsTypedArray()) throw sable::Error(Code::invalid_argument, "column values must be a typed array");
    Napi::TypedArray ta = values.As<Napi::TypedArray>();
    if (ta.ElementLength() != rows || ta.ElementSize() != column_type_size(b.type))
      throw sable::Error(Code::invalid_argument, "column '" + b.name + "' has the wrong length or element type");
    b.values = static_cast<const uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
    b.valid = nullptr;
    Napi::Value valid = c.Get("valid");
    if (valid.IsTypedArray()) {
      Napi::Uint8Array va = valid.As<Napi::Uint8Array>();
      if (va.ElementLength() != rows) throw sable::Error(Code::invalid_argument, "column validity has the wrong length");
      b.valid = va.Data();
    }
    columns.push_back(std::move(b));
  }
  return columns;
}

Napi::Value segment_append(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    std::vector<int64_t> ids = ids_arg(info, 1);
    Napi::Float32Array vectors = float32_arg(info, 2, "vectors");
    if (vectors.ElementLength() != ids.size() * seg->dim())
      throw sable::Error(Code::invalid_argument, "vectors must hold ids.length * dim values");
    std::vector<ColumnBatch> columns = columns_arg(info, 3, ids.size());
    seg->append(ids.data(), vectors.Data(), ids.size(), columns);
    return info.Env().Undefined();
  });
}

Napi::Value segment_remove(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    std::vector<int64_t> ids = ids_arg(info, 1);
    return Napi::Number::New(info.Env(), double(seg->remove(ids.data(), ids.size())));
  });
}

Napi::Value segment_reconcile(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    std::vector<int64_t> members = ids_arg(info, 1);
    Segment::Reconciled r = seg->reconcile(members.data(), members.size());
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("removed", double(r.removed));
    o.Set("missing", double(r.missing));
    return o;
  });
}

Napi::Value segment_contains(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    std::vector<int64_t> ids = ids_arg(info, 1);
    return mask_array(info.Env(), seg->contains(ids.data(), ids.size()));
  });
}

Napi::Value segment_row_ids(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    return id_array(info.Env(), segment_of(uint32_arg(info, 0, "handle"))->row_ids());
  });
}

Napi::Value segment_column_types(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Object o = Napi::Object::New(info.Env());
    for (const auto& [name, type] : segment_of(uint32_arg(info, 0, "handle"))->column_types()) o.Set(name, column_type_name(type));
    return o;
  });
}

Napi::Value segment_replace_columns(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    uint32_t rows = uint32_arg(info, 2, "rows");
    seg->replace_columns(columns_arg(info, 1, rows), rows);
    return info.Env().Undefined();
  });
}

Napi::Value segment_match(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    std::vector<int64_t> ids = ids_arg(info, 1);
    return mask_array(info.Env(), seg->match(ids.data(), ids.size(), query_options(info[2]).predicates));
  });
}

Napi::Value segment_score(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    std::vector<int64_t> ids = ids_arg(info, 1);
    Napi::Float32Array query = float32_arg(info, 2, "query");
    if (query.ElementLength() != seg->dim()) throw sable::Error(Code::invalid_argument, "query length differs from the dimension");
    std::vector<float> scores = seg->score(ids.data(), ids.size(), query.Data());
    Napi::Float32Array out = Napi::Float32Array::New(info.Env(), scores.size());
    std::copy(scores.begin(), scores.end(), out.Data());
    return out;
  });
}

Napi::Value segment_seal(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    segment_of(uint32_arg(info, 0, "handle"))->seal();
    return info.Env().Undefined();
  });
}

Napi::Value segment_adopt_lists(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto target = segment_of(uint32_arg(info, 0, "handle"));
    auto source = segment_of(uint32_arg(info, 1, "source"));
    return Napi::Boolean::New(info.Env(), target->adopt_lists(*source));
  });
}

Napi::Value segment_build(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    IndexType type = parse_index_type(string_arg(info, 1, "indexType"));
    BuildOptions opts;
    if (info.Length() > 2 && info[2].IsObject()) {
      Napi::Object o = info[2].As<Napi::Object>();
      opts.nlist = opt_u32(o, "nlist");
      opts.m = opt_u32(o, "m");
      opts.ef_construction = opt_u32(o, "efConstruction");
      opts.threads = opt_u32(o, "threads");
    }
    seg->seal();
    auto extended = std::make_shared<bool>(false);
    return queue_background(new Task(info.Env(), [seg, type, opts, extended] { *extended = seg->build(type, opts); },
                          [extended](Napi::Env env) -> Napi::Value { return Napi::Boolean::New(env, *extended); }));
  });
}

Napi::Value segment_compact_rows(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    IndexType type = parse_index_type(string_arg(info, 1, "indexType"));
    auto half = std::make_shared<bool>(false);
    return queue_background(new Task(info.Env(), [seg, type, half] { *half = seg->compact_rows_for(type); },
                          [half](Napi::Env env) { return Napi::Boolean::New(env, *half); }));
  });
}

// Lists an index of this type builds over `rows` rows when no nlist is set (0 without lists).
Napi::Value index_lists_for(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto index = make_index(parse_index_type(string_arg(info, 0, "indexType")));
    return Napi::Number::New(info.Env(), index->lists_for(uint32_arg(info, 1, "rows"), uint32_arg(info, 2, "dim")));
  });
}

Napi::Value segment_stats(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    SegmentStats s = segment_of(uint32_arg(info, 0, "handle"))->stats();
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("rows", double(s.rows));
    o.Set("live", double(s.live));
    o.Set("memoryBytes", double(s.memory_bytes));
    o.Set("sealed", s.sealed);
    o.Set("indexType", index_type_name(s.index_type));
    o.Set("indexStatus", index_status_name(s.index_status));
    o.Set("progress", s.progress);
    o.Set("nlist", s.nlist);
    o.Set("defaultNprobe", s.default_nprobe);
    o.Set("defaultBeamWidth", s.default_beam_width);
    return o;
  });
}

Napi::Value segment_live_ids(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    return id_array(info.Env(), segment_of(uint32_arg(info, 0, "handle"))->live_ids());
  });
}

// The copies below (absorb, live copy, extend) run on the libuv pool at the service's own
// priority, not on the background threads: the engine makes them inside a dataset's writer turn
// (a compaction's or a bulk load's), so every write waits for them. At nice +10 under the soak's
// busy CPU, a 150 ms copy took about 2 s, and the upserts' p99 with it (729 ms).
Napi::Value segment_absorb(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto target = segment_of(uint32_arg(info, 0, "target"));
    auto source = segment_of(uint32_arg(info, 1, "source"));
    return queue(new Task(info.Env(), [target, source] { target->append_live_rows_of(*source); },
                          [](Napi::Env env) { return env.Undefined(); }));
  });
}

// segmentLiveCopy(handle): a new sealed segment of the live rows, indexed when the index could drop rows.
Napi::Value segment_live_copy(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto source = segment_of(uint32_arg(info, 0, "handle"));
    auto copy = std::make_shared<std::shared_ptr<Segment>>();
    return queue(new Task(info.Env(), [source, copy] { *copy = source->live_copy(); },
                          [copy](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, register_segment(*copy)); }));
  });
}

// segmentExtend(base, sources[]): a new sealed, unindexed segment of base's live rows and then
// the sources', whose build extends base's index when it can.
Napi::Value segment_extend(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto base = segment_of(uint32_arg(info, 0, "base"));
    auto sources = segments_arg(info, 1);
    auto made = std::make_shared<std::shared_ptr<Segment>>();
    return queue(new Task(info.Env(), [base, sources, made] { *made = base->extended(sources); },
                          [made](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, register_segment(*made)); }));
  });
}

// Snapshot checksums cross the boundary as 16 hex digits: exact (a double is not), and plain to store.
std::string checksum_hex(uint64_t c) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(c));
  return out;
}

Napi::Value segment_save(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto seg = segment_of(uint32_arg(info, 0, "handle"));
    std::string path = string_arg(info, 1, "path");
    auto written = std::make_shared<uint64_t>(0);
    return queue_background(new Task(info.Env(), [seg, path, written] { *written = seg->save(path); },
                          [written](Napi::Env env) -> Napi::Value { return Napi::String::New(env, checksum_hex(*written)); }));
  });
}

// segmentLoad(path, checksum?): with a checksum, only the snapshot that save answered it for.
Napi::Value segment_load(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    std::string path = string_arg(info, 0, "path");
    std::shared_ptr<uint64_t> expected;
    if (info.Length() > 1 && !info[1].IsUndefined()) {
      std::string hex = string_arg(info, 1, "checksum");
      uint64_t value = 0;
      auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
      if (ec != std::errc() || end != hex.data() + hex.size() || hex.size() != 16)
        throw sable::Error(Code::invalid_argument, "checksum must be 16 hex digits");
      expected = std::make_shared<uint64_t>(value);
    }
    auto loaded = std::make_shared<std::shared_ptr<Segment>>();
    return queue(new Task(info.Env(), [loaded, path, expected] { *loaded = Segment::load(path, expected.get()); },
                          [loaded](Napi::Env env) -> Napi::Value {
                            return Napi::Number::New(env, register_segment(*loaded));
                          }));
  });
}

Napi::Value search(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto segs = segments_arg(info, 0);
    Napi::Float32Array query = float32_arg(info, 1, "query");
    // The engine checks the query first; this keeps a bad call from reading past its end.
    if (!segs.empty() && query.ElementLength() != segs.front()->dim())
      throw sable::Error(Code::invalid_argument, "query length differs from the dimension");
    return result_object(info.Env(), search_segments(segs, query.Data(), search_options(info[2])));
  });
}

Napi::Value search_batch(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto segs = segments_arg(info, 0);
    Napi::Float32Array queries = float32_arg(info, 1, "queries");
    size_t dim = segs.empty() ? 1 : segs.front()->dim();
    if (queries.ElementLength() % dim) throw sable::Error(Code::invalid_argument, "queries length is not a multiple of the dimension");
    size_t nq = queries.ElementLength() / dim;
    QueryOptions opts = search_options(info[2]);
    unsigned threads = info.Length() > 3 && info[3].IsNumber() ? info[3].As<Napi::Number>().Uint32Value() : 1;
    const float* data = queries.Data();
    auto results = std::make_shared<std::vector<SearchResult>>();
    return queue(new Task(
        info.Env(), [segs, data, nq, opts, threads, results] { *results = search_batch(segs, data, nq, opts, threads); },
        [results](Napi::Env env) -> Napi::Value { return batch_object(env, *results); },
        {queries}));
  });
}

}  // namespace

void register_segments(Napi::Env env, Napi::Object exports) {
  set(env, exports, "segmentCreate", segment_create);
  set(env, exports, "segmentRelease", segment_release);
  set(env, exports, "segmentAppend", segment_append);
  set(env, exports, "segmentRemove", segment_remove);
  set(env, exports, "segmentContains", segment_contains);
  set(env, exports, "segmentReconcile", segment_reconcile);
  set(env, exports, "segmentSeal", segment_seal);
  set(env, exports, "segmentMatch", segment_match);
  set(env, exports, "segmentScore", segment_score);
  set(env, exports, "segmentRowIds", segment_row_ids);
  set(env, exports, "segmentReplaceColumns", segment_replace_columns);
  set(env, exports, "segmentColumnTypes", segment_column_types);
  set(env, exports, "segmentBuild", segment_build);
  set(env, exports, "segmentAdoptLists", segment_adopt_lists);
  set(env, exports, "segmentCompactRows", segment_compact_rows);
  set(env, exports, "segmentStats", segment_stats);
  set(env, exports, "indexListsFor", index_lists_for);
  set(env, exports, "segmentLiveIds", segment_live_ids);
  set(env, exports, "segmentAbsorb", segment_absorb);
  set(env, exports, "segmentLiveCopy", segment_live_copy);
  set(env, exports, "segmentExtend", segment_extend);
  set(env, exports, "segmentSave", segment_save);
  set(env, exports, "segmentLoad", segment_load);
  set(env, exports, "search", search);
  set(env, exports, "searchBatch", search_batch);
}

}  // namespace sable::binding
