#include "common.h"

namespace sable {

const char* code_name(Code c) {
  switch (c) {
#define SABLE_CODE_NAME(name) \
  case Code::name:            \
    return #name;
    SABLE_ERROR_CODES(SABLE_CODE_NAME)
#undef SABLE_CODE_NAME
  }
  return "internal";
}

const char* metric_name(Metric m) {
  switch (m) {
    case Metric::L2: return "l2";
    case Metric::IP: return "ip";
    case Metric::Cosine: return "cosine";
  }
  return "unknown";
}

Metric parse_metric(const std::string& name) {
  if (name == "l2") return Metric::L2;
  if (name == "ip") return Metric::IP;
  if (name == "cosine") return Metric::Cosine;
  throw Error(Code::invalid_argument, "unknown metric '" + name + "' (expected cosine, l2 or ip)");
}

const char* index_type_name(IndexType t) {
  switch (t) {
    case IndexType::Flat: return "flat";
    case IndexType::Ivf: return "ivf";
    case IndexType::Hnsw: return "hnsw";
    case IndexType::Sable: return "sable";
  }
  return "unknown";
}

IndexType parse_index_type(const std::string& name) {
  if (name == "flat") return IndexType::Flat;
  if (name == "ivf") return IndexType::Ivf;
  if (name == "hnsw") return IndexType::Hnsw;
  if (name == "sable") return IndexType::Sable;
  throw Error(Code::invalid_argument, "unknown index type '" + name + "' (expected sable, hnsw, ivf or flat)");
}

}  // namespace sable
