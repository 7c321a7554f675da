// Parquet page headers (Thrift compact PageHeader), read with every count and size checked:
// a header is untrusted input, and the sizes it declares are what the decoder allocates by.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable::parquet {

enum class PageType : int32_t { data = 0, index = 1, dictionary = 2, data_v2 = 3 };

// Parquet's Encoding enum, the values this reader meets.
enum Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
};

struct PageHeader {
  int32_t type = -1;
  int32_t uncompressed_size = -1;
  int32_t compressed_size = -1;
  // DATA_PAGE
  bool has_v1 = false;
  int32_t num_values = -1;
  int32_t encoding = -1;
  int32_t def_encoding = -1;
  int32_t rep_encoding = -1;
  // DICTIONARY_PAGE (num_values and encoding above)
  bool has_dictionary = false;
  // DATA_PAGE_V2 (num_values and encoding above)
  bool has_v2 = false;
  int32_t num_nulls = -1;
  int32_t num_rows = -1;
  int32_t def_length = -1;
  int32_t rep_length = -1;
  bool is_compressed = true;
};

// Reads the header at the start of [data, data + size); returns its length in bytes. Throws
// Error(invalid_argument) when the bytes end early, nest too deep, declare more items than they
// hold, or a required field is missing or negative.
size_t read_page_header(const uint8_t* data, size_t size, PageHeader& out);

}  // namespace sable::parquet
