// Typed metadata columns of a segment, evaluated into row bitsets by predicates. Strings are
// dictionary codes (the engine keeps the dictionary); booleans are 0/1; a null bitmap marks
// rows without a value.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../bitset.h"
#include "../common.h"

namespace sable {

class Reader;
class Writer;

enum class ColumnType : uint8_t { U32 = 0, I32 = 1, I64 = 2, F32 = 3, F64 = 4, Str = 5, Bool = 6 };
ColumnType parse_column_type(const std::string& name);  // throws Error(Code::invalid_argument)
const char* column_type_name(ColumnType t);
constexpr ColumnType kColumnTypes[] = {ColumnType::U32, ColumnType::I32, ColumnType::I64, ColumnType::F32,
                                       ColumnType::F64, ColumnType::Str, ColumnType::Bool};
size_t column_type_size(ColumnType t);

enum class PredicateOp : uint8_t { Eq, Gt, Gte, Lt, Lte, In, IsNull };
PredicateOp parse_predicate_op(const std::string& name);  // throws Error(Code::invalid_argument)
const char* predicate_op_name(PredicateOp op);
constexpr PredicateOp kPredicateOps[] = {PredicateOp::Eq, PredicateOp::Gt, PredicateOp::Gte, PredicateOp::Lt,
                                         PredicateOp::Lte, PredicateOp::In, PredicateOp::IsNull};

// One condition on one column; a filter is the AND of its predicates. Operands are numbers:
// string operands arrive as dictionary codes (-1 for a string the dictionary has never seen).
struct Predicate {
  std::string column;
  PredicateOp op;
  std::vector<double> values;
};

// A batch of values for one column, appended alongside a batch of vectors.
struct ColumnBatch {
  std::string name;
  ColumnType type;
  const void* values;    // n elements of the type's width
  const uint8_t* valid;  // n flags (0: null), or null when every value is present
};

class Column {
 public:
  explicit Column(ColumnType type) : type_(type) {}
  ColumnType type() const { return type_; }
  size_t size() const { return nulls_.size(); }
  void append(const void* values, const uint8_t* valid, size_t n);
  void append_nulls(size_t n);
  // Copies row `r` of `other` (same type) to the end.
  void append_row(const Column& other, uint32_t r);
  // Sets, in `out` (sized to the rows), the rows where the predicate holds.
  void evaluate(const Predicate& p, Bitset& out) const;
  size_t memory_bytes() const { return bytes_.capacity() + nulls_.words().capacity() * 8; }
  void save(Writer& w) const;
  static Column load(Reader& r);

 private:
  template <class T>
  void evaluate_as(const Predicate& p, Bitset& out) const;
  ColumnType type_;
  std::vector<uint8_t> bytes_;
  Bitset nulls_;
};

class Columns {
 public:
  // Appends a batch of n rows: named columns get their values, columns the batch does not name
  // get nulls, new columns are created with nulls for the earlier rows. A name given twice, or
  // with a type other than its column's, is an Error(Code::invalid_argument).
  void append(const std::vector<ColumnBatch>& batch, size_t rows_before, size_t n);
  // AND of all predicates over `rows` rows.
  Bitset evaluate(const std::vector<Predicate>& preds, size_t rows) const;
  const std::map<std::string, Column>& all() const { return columns_; }
  std::map<std::string, Column>& all() { return columns_; }
  size_t memory_bytes() const;
  void save(Writer& w) const;
  void load(Reader& r, size_t rows);

 private:
  std::map<std::string, Column> columns_;
};

}  // namespace sable
