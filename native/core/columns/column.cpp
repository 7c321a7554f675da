#include "column.h"

#include <algorithm>
#include <cstring>

#include "../io.h"

namespace sable {

ColumnType parse_column_type(const std::string& n) {
  if (n == "u32") return ColumnType::U32;
  if (n == "i32") return ColumnType::I32;
  if (n == "i64") return ColumnType::I64;
  if (n == "f32") return ColumnType::F32;
  if (n == "f64") return ColumnType::F64;
  if (n == "string") return ColumnType::Str;
  if (n == "bool") return ColumnType::Bool;
  throw Error(Code::invalid_argument, "unknown column type '" + n + "'");
}

const char* column_type_name(ColumnType t) {
  switch (t) {
    case ColumnType::U32: return "u32";
    case ColumnType::I32: return "i32";
    case ColumnType::I64: return "i64";
    case ColumnType::F32: return "f32";
    case ColumnType::F64: return "f64";
    case ColumnType::Str: return "string";
    case ColumnType::Bool: return "bool";
  }
  return "u32";
}

size_t column_type_size(ColumnType t) {
  switch (t) {
    case ColumnType::U32: case ColumnType::I32: case ColumnType::F32: case ColumnType::Str: return 4;
    case ColumnType::I64: case ColumnType::F64: return 8;
    case ColumnType::Bool: return 1;
  }
  return 0;
}

const char* predicate_op_name(PredicateOp op) {
  switch (op) {
    case PredicateOp::Eq: return "eq";
    case PredicateOp::Gt: return "gt";
    case PredicateOp::Gte: return "gte";
    case PredicateOp::Lt: return "lt";
    case PredicateOp::Lte: return "lte";
    case PredicateOp::In: return "in";
    case PredicateOp::IsNull: return "is_null";
  }
  return "eq";
}

PredicateOp parse_predicate_op(const std::string& n) {
  if (n == "eq") return PredicateOp::Eq;
  if (n == "gt") return PredicateOp::Gt;
  if (n == "gte") return PredicateOp::Gte;
  if (n == "lt") return PredicateOp::Lt;
  if (n == "lte") return PredicateOp::Lte;
  if (n == "in") return PredicateOp::In;
  if (n == "is_null") return PredicateOp::IsNull;
  throw Error(Code::invalid_argument, "unknown filter operator '" + n + "'");
}

void Column::append(const void* values, const uint8_t* valid, size_t n) {
  size_t w = column_type_size(type_);
  size_t start = bytes_.size();
  bytes_.resize(start + n * w);
  std::memcpy(bytes_.data() + start, values, n * w);
  size_t rows = nulls_.size();
  nulls_.resize(rows + n);
  if (valid)
    for (size_t i = 0; i < n; ++i)
      if (!valid[i]) nulls_.set(rows + i);
}

void Column::append_nulls(size_t n) {
  bytes_.resize(bytes_.size() + n * column_type_size(type_), 0);
  nulls_.resize(nulls_.size() + n, true);
}

void Column::append_row(const Column& other, uint32_t r) {
  size_t w = column_type_size(type_);
  bytes_.insert(bytes_.end(), other.bytes_.begin() + size_t(r) * w, other.bytes_.begin() + size_t(r + 1) * w);
  nulls_.resize(nulls_.size() + 1, other.nulls_.test(r));
}

template <class T>
void Column::evaluate_as(const Predicate& p, Bitset& out) const {
  const T* v = reinterpret_cast<const T*>(bytes_.data());
  size_t n = size();
  // 64 rows at a time into one word, with no branch per row, so the compare loop vectorises;
  // nulls are masked out per word. A filter over every row of a large segment is on the search path.
  auto each = [&](auto&& holds) {
    auto& words = out.words();
    const auto& nulls = nulls_.words();
    for (size_t w = 0; w * 64 < n; ++w) {
      size_t base = w * 64, end = std::min(n, base + 64);
      uint64_t bits = 0;
      for (size_t r = base; r < end; ++r) bits |= uint64_t(holds(double(v[r]))) << (r - base);
      words[w] |= bits & ~nulls[w];
    }
  };
  if (p.op == PredicateOp::In) {
    std::vector<double> sorted(p.values);
    std::sort(sorted.begin(), sorted.end());
    each([&](double x) { return std::binary_search(sorted.begin(), sorted.end(), x); });
    return;
  }
  if (p.values.empty()) return;
  double a = p.values[0];
  switch (p.op) {
    case PredicateOp::Eq: each([a](double x) { return x == a; }); break;
    case PredicateOp::Gt: each([a](double x) { return x > a; }); break;
    case PredicateOp::Gte: each([a](double x) { return x >= a; }); break;
    case PredicateOp::Lt: each([a](double x) { return x < a; }); break;
    case PredicateOp::Lte: each([a](double x) { return x <= a; }); break;
    default: break;
  }
}

void Column::evaluate(const Predicate& p, Bitset& out) const {
  if (p.op == PredicateOp::IsNull) {
    nulls_.for_each([&](uint32_t r) { out.set(r); });
    return;
  }
  switch (type_) {
    case ColumnType::U32: case ColumnType::Str: evaluate_as<uint32_t>(p, out); break;
    case ColumnType::I32: evaluate_as<int32_t>(p, out); break;
    case ColumnType::I64: evaluate_as<int64_t>(p, out); break;
    case ColumnType::F32: evaluate_as<float>(p, out); break;
    case ColumnType::F64: evaluate_as<double>(p, out); break;
    case ColumnType::Bool: evaluate_as<uint8_t>(p, out); break;
  }
}

void Column::save(Writer& w) const {
  w.u8(uint8_t(type_));
  w.vec(bytes_);
  w.u64(nulls_.size());
  w.vec(nulls_.words());
}

Column Column::load(Reader& r) {
  uint8_t t = r.u8();
  if (t > uint8_t(ColumnType::Bool)) throw Error(Code::snapshot_corrupt, "unknown column type in snapshot");
  Column c{ColumnType(t)};
  c.bytes_ = r.vec<uint8_t>();
  size_t rows = r.u64();
  c.nulls_.resize(rows);
  auto words = r.vec<uint64_t>();
  if (words.size() != c.nulls_.words().size() || c.bytes_.size() != rows * column_type_size(c.type_))
    throw Error(Code::snapshot_corrupt, "column sizes disagree in snapshot");
  c.nulls_.words() = std::move(words);
  return c;
}

void Columns::append(const std::vector<ColumnBatch>& batch, size_t rows_before, size_t n) {
  for (size_t i = 0; i < batch.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (batch[j].name == batch[i].name) throw Error(Code::invalid_argument, "column '" + batch[i].name + "' given twice");
    auto it = columns_.find(batch[i].name);
    if (it != columns_.end() && it->second.type() != batch[i].type)
      throw Error(Code::invalid_argument, "column '" + batch[i].name + "' has another type in this segment");
  }
  for (const auto& b : batch) {
    auto [it, created] = columns_.try_emplace(b.name, b.type);
    if (created) it->second.append_nulls(rows_before);
    it->second.append(b.values, b.valid, n);
  }
  for (auto& [name, col] : columns_)
    if (col.size() < rows_before + n) col.append_nulls(rows_before + n - col.size());
}

Bitset Columns::evaluate(const std::vector<Predicate>& preds, size_t rows) const {
  Bitset acc(rows, true);
  for (const auto& p : preds) {
    Bitset one(rows);
    auto it = columns_.find(p.column);
    if (it != columns_.end()) it->second.evaluate(p, one);
    else if (p.op == PredicateOp::IsNull) one.set_all();
    acc.and_with(one);
  }
  return acc;
}

size_t Columns::memory_bytes() const {
  size_t b = 0;
  for (const auto& [n, c] : columns_) b += c.memory_bytes() + n.size();
  return b;
}

void Columns::save(Writer& w) const {
  w.u64(columns_.size());
  for (const auto& [name, col] : columns_) {
    w.str(name);
    col.save(w);
  }
}

void Columns::load(Reader& r, size_t rows) {
  columns_.clear();
  size_t n = r.u64();
  for (size_t i = 0; i < n; ++i) {
    std::string name = r.str();
    Column c = Column::load(r);
    if (c.size() != rows) throw Error(Code::snapshot_corrupt, "column '" + name + "' has a wrong row count");
    columns_.emplace(std::move(name), std::move(c));
  }
}

}  // namespace sable
