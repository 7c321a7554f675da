#include "rle_hybrid.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "../common.h"

namespace sable::parquet {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(Code::invalid_argument, "corrupt RLE/bit-packed data: " + what); }

// Unpacks `n` (<= 8) values of one group of 8 from `avail` bytes (a group is `w` bytes; fewer
// when the data ends inside its padding).
template <class T>
inline void unpack_group(const uint8_t* src, size_t avail, int w, T* out, size_t n) {
  uint8_t buf[40] = {};
  std::memcpy(buf, src, std::min<size_t>(avail, size_t(w)));
  const uint64_t mask = (uint64_t(1) << w) - 1;
  for (size_t i = 0; i < n; i++) {
    const size_t bit = i * size_t(w);
    uint64_t word;
    std::memcpy(&word, buf + bit / 8, 8);
    out[i] = T((word >> (bit % 8)) & mask);
  }
}

// Width 1 (repetition levels of lists, booleans-like levels): one byte holds a whole group.
template <class T>
inline void unpack_width1(const uint8_t* src, T* out, size_t groups) {
  for (size_t g = 0; g < groups; g++) {
    const uint8_t b = src[g];
    for (int i = 0; i < 8; i++) out[g * 8 + i] = T((b >> i) & 1);
  }
}

template <class T>
void decode(const uint8_t* data, size_t size, int w, T* out, size_t count) {
  if (w < 0 || w > 32 || (sizeof(T) == 1 && w > 8)) bad("bit width " + std::to_string(w) + " is out of range");
  const uint8_t* p = data;
  const uint8_t* const end = data + size;
  const size_t value_bytes = size_t(w + 7) / 8;
  size_t done = 0;
  while (done < count) {
    uint64_t header = 0;
    for (int shift = 0;; shift += 7) {
      if (p == end) bad("the data ends before " + std::to_string(count) + " values");
      if (shift > 35) bad("a run header is too long");
      const uint8_t b = *p++;
      header |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    const size_t want = count - done;
    if (header & 1) {
      const uint64_t groups = header >> 1;
      const uint64_t bytes = groups * uint64_t(w);  // groups < 2^35, w <= 32: no overflow
      const size_t avail = size_t(std::min<uint64_t>(bytes, uint64_t(end - p)));
      const size_t take = size_t(std::min<uint64_t>(groups * 8, want));
      if ((uint64_t(take) * uint64_t(w) + 7) / 8 > avail) bad("a bit-packed run runs past the end of the data");
      size_t i = 0;
      if (w == 1) {
        unpack_width1(p, out + done, take / 8);
        i = take / 8 * 8;
      } else if (w == 0) {
        std::fill(out + done, out + done + take, T(0));
        i = take;
      }
      for (; i < take; i += 8) {
        const size_t at = i / 8 * size_t(w);
        unpack_group(p + at, avail - at, w, out + done + i, std::min<size_t>(8, take - i));
      }
      p += avail;
      done += take;
    } else {
      const uint64_t run = header >> 1;
      if (size_t(end - p) < value_bytes) bad("a run's value runs past the end of the data");
      uint64_t v = 0;
      for (size_t i = 0; i < value_bytes; i++) v |= uint64_t(p[i]) << (8 * i);
      p += value_bytes;
      if (w < 32 && (v >> w) != 0) bad("a run's value does not fit its bit width");
      const size_t take = size_t(std::min<uint64_t>(run, want));
      std::fill(out + done, out + done + take, T(v));
      done += take;
    }
  }
}

}  // namespace

void rle_hybrid_decode(const uint8_t* data, size_t size, int bit_width, uint8_t* out, size_t count) {
  decode(data, size, bit_width, out, count);
}

void rle_hybrid_decode(const uint8_t* data, size_t size, int bit_width, uint32_t* out, size_t count) {
  decode(data, size, bit_width, out, count);
}

}  // namespace sable::parquet
