#include "index.h"

namespace sable {

std::unique_ptr<VectorIndex> make_flat_index();
std::unique_ptr<VectorIndex> make_ivf_index();
std::unique_ptr<VectorIndex> make_hnsw_index();
std::unique_ptr<VectorIndex> make_sable_index();

std::unique_ptr<VectorIndex> make_index(IndexType type) {
  switch (type) {
    case IndexType::Flat: return make_flat_index();
    case IndexType::Ivf: return make_ivf_index();
    case IndexType::Hnsw: return make_hnsw_index();
    case IndexType::Sable: return make_sable_index();
  }
  throw Error(Code::invalid_argument, "unknown index type");
}

}  // namespace sable
