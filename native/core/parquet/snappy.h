// Raw Snappy (the block format Parquet's SNAPPY codec uses, no framing), decoded with every
// length and back-reference checked against the source and the destination.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable::parquet {

// Decodes src into dst, which must be exactly `expected` bytes (the page's declared
// uncompressed size); throws Error(invalid_argument) on any malformed or mismatched input.
void snappy_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t expected);

}  // namespace sable::parquet
