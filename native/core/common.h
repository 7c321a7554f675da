// Shared vocabulary of the sable core: errors with stable codes, metrics, index kinds.
// The core compiles without Node headers; only native/binding sees N-API.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace sable {

// Every code the core can raise. The binding exports the list (`errorCodes()`), and a test
// checks it against the one registry of codes (errors/codes.ts), where the HTTP layer finds
// each code's status.
#define SABLE_ERROR_CODES(X)                                                                     \
  X(invalid_argument) X(snapshot_corrupt) X(snapshot_missing) X(io_error) X(unsupported)         \
  X(model_invalid) X(model_not_found) X(segment_not_found) X(segment_sealed) X(index_building)   \
  X(out_of_memory) X(internal)

enum class Code : uint8_t {
#define SABLE_CODE_ENUM(name) name,
  SABLE_ERROR_CODES(SABLE_CODE_ENUM)
#undef SABLE_CODE_ENUM
};
const char* code_name(Code c);

// Every failure the core reports carries one of those codes; the binding turns it into a JS
// error `code`.
class Error : public std::runtime_error {
 public:
  Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

// Internal distances ascend (lower is nearer): L2 uses squared euclidean, IP and Cosine use the
// negated dot product (Cosine rows and queries are L2-normalised on the way in).
enum class Metric : uint8_t { L2 = 0, IP = 1, Cosine = 2 };

enum class IndexType : uint8_t { Flat = 0, Ivf = 1, Hnsw = 2, Sable = 3 };

// The names of every value of each enumeration, in enum order: the binding exports them so the
// TypeScript vocabulary (engine/vocabulary.ts) is checked against the core's.
constexpr Metric kMetrics[] = {Metric::L2, Metric::IP, Metric::Cosine};
constexpr IndexType kIndexTypes[] = {IndexType::Flat, IndexType::Ivf, IndexType::Hnsw, IndexType::Sable};

const char* metric_name(Metric m);
Metric parse_metric(const std::string& name);  // throws Error(Code::invalid_argument)
const char* index_type_name(IndexType t);
IndexType parse_index_type(const std::string& name);  // throws Error(Code::invalid_argument)

// Score exposed to users from an internal distance: l2 -> squared distance, ip -> -dot,
// cosine -> 1 - cosine similarity.
inline float score_from_distance(Metric m, float d) { return m == Metric::Cosine ? 1.0f + d : d; }

}  // namespace sable
