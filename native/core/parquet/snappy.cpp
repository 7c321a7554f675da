#include "snappy.h"

#include <cstring>
#include <string>

#include "../common.h"

namespace sable::parquet {

namespace {

[[noreturn]] void bad(const char* what) { throw Error(Code::invalid_argument, std::string("corrupt Snappy data: ") + what); }

}  // namespace

void snappy_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t expected) {
  const uint8_t* p = src;
  const uint8_t* const end = src + size;
  uint64_t length = 0;
  for (int shift = 0;; shift += 7) {
    if (p == end) bad("the length preamble is cut short");
    if (shift > 35) bad("the length preamble is too long");
    const uint8_t b = *p++;
    length |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if (length != expected) {
    throw Error(Code::invalid_argument, "corrupt Snappy data: it holds " + std::to_string(length) +
                                            " bytes where the page header declares " + std::to_string(expected));
  }
  uint8_t* out = dst;
  uint8_t* const out_end = dst + expected;
  while (p < end) {
    const uint8_t tag = *p++;
    size_t len;
    size_t offset;
    switch (tag & 3) {
      case 0: {
        len = tag >> 2;
        if (len >= 60) {
          const size_t extra = len - 59;
          if (size_t(end - p) < extra) bad("a literal length is cut short");
          len = 0;
          for (size_t i = 0; i < extra; i++) len |= size_t(p[i]) << (8 * i);
          p += extra;
        }
        len += 1;
        if (size_t(end - p) < len) bad("a literal runs past the end of the data");
        if (size_t(out_end - out) < len) bad("a literal runs past the declared size");
        std::memcpy(out, p, len);
        p += len;
        out += len;
        continue;
      }
      case 1:
        if (p == end) bad("a copy is cut short");
        len = 4 + ((tag >> 2) & 7);
        offset = (size_t(tag >> 5) << 8) | *p++;
        break;
      case 2:
        if (end - p < 2) bad("a copy is cut short");
        len = 1 + (tag >> 2);
        offset = size_t(p[0]) | (size_t(p[1]) << 8);
        p += 2;
        break;
      default:
        if (end - p < 4) bad("a copy is cut short");
        len = 1 + (tag >> 2);
        offset = size_t(p[0]) | (size_t(p[1]) << 8) | (size_t(p[2]) << 16) | (size_t(p[3]) << 24);
        p += 4;
        break;
    }
    if (offset == 0 || offset > size_t(out - dst)) bad("a copy reaches before the start of the output");
    if (size_t(out_end - out) < len) bad("a copy runs past the declared size");
    const uint8_t* from = out - offset;
    if (offset >= len) {
      std::memcpy(out, from, len);
      out += len;
    } else {
      // Overlapping: the copy repeats the last `offset` bytes.
      for (size_t i = 0; i < len; i++) out[i] = from[i];
      out += len;
    }
  }
  if (out != out_end) bad("the data ends before the declared size");
}

}  // namespace sable::parquet
