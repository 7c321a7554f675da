// Parquet's RLE / bit-packed hybrid encoding: definition and repetition levels, and dictionary
// indices. Every run is checked against the bytes it lies in.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable::parquet {

// Decodes exactly `count` values of `bit_width` bits (0..32) from [data, data + size) into out.
// Throws Error(invalid_argument) when the data ends first or a run's value does not fit the
// width. The trailing padding of the last bit-packed group is not required to be present.
void rle_hybrid_decode(const uint8_t* data, size_t size, int bit_width, uint8_t* out, size_t count);
void rle_hybrid_decode(const uint8_t* data, size_t size, int bit_width, uint32_t* out, size_t count);

// The bits needed for values 0..max.
inline int bit_width_of(uint32_t max) {
  int w = 0;
  while (w < 32 && (uint64_t(1) << w) <= max) w++;
  return w;
}

}  // namespace sable::parquet
