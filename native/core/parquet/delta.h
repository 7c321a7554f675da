// Parquet's delta encodings, which v2 writers (parquet-rs among them) fall back to when a
// column's dictionary grows too large: DELTA_BINARY_PACKED integers, and the lengths (and
// prefixes) of DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY strings. Every block, width and
// length is checked against the bytes it lies in.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable::parquet {

// Decodes exactly `count` integers (the header must declare that many) into out, with the
// wrapping arithmetic of the format (INT32 columns keep the low 32 bits). Returns the bytes
// the encoded run takes, so data after it can be found.
size_t delta_binary_decode(const uint8_t* data, size_t size, uint64_t* out, size_t count);

}  // namespace sable::parquet
