// Shared vocabulary of the sable core: errors with stable codes, metrics, index kinds.
// The core compiles without Node headers; only native/binding sees N-API.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace sable {

// Every failure the core reports carries a stable string code that the binding turns into
// a JS error `code`, and that the HTTP layer maps to a status through one table.
class Error : public std::runtime_error {
 public:
  Error(std::string code, const std::string& message) : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// Internal distances ascend (lower is nearer): L2 uses squared euclidean, IP and Cosine use the
// negated dot product (Cosine rows and queries are L2-normalised on the way in).
enum class Metric : uint8_t { L2 = 0, IP = 1, Cosine = 2 };

enum class IndexType : uint8_t { Flat = 0, Ivf = 1, Hnsw = 2, Sable = 3 };

const char* metric_name(Metric m);
Metric parse_metric(const std::string& name);  // throws Error("invalid_argument")
const char* index_type_name(IndexType t);
IndexType parse_index_type(const std::string& name);  // throws Error("invalid_argument")

// Score exposed to users from an internal distance: l2 -> squared distance, ip -> -dot,
// cosine -> 1 - cosine similarity.
inline float score_from_distance(Metric m, float d) { return m == Metric::Cosine ? 1.0f + d : d; }

}  // namespace sable
