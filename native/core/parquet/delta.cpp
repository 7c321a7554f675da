#include "delta.h"

#include <cstring>
#include <string>

#include "../common.h"

namespace sable::parquet {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(Code::invalid_argument, "corrupt DELTA_BINARY_PACKED data: " + what); }

// Blocks of more values than this are refused (writers use 128).
constexpr uint64_t kMaxBlock = uint64_t(1) << 16;

struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  uint64_t varint() {
    uint64_t out = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p == end) bad("the data ends early");
      const uint8_t b = *p++;
      out |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return out;
    }
    bad("a varint is too long");
  }
  uint64_t zigzag() {
    const uint64_t v = varint();
    return (v >> 1) ^ (~(v & 1) + 1);
  }
};

// Bit `bit` of [p, p + avail) onwards, `w` (1..64) bits; the caller checked bit + w <= avail * 8.
inline uint64_t bits_at(const uint8_t* p, size_t avail, uint64_t bit, int w) {
  const size_t byte = size_t(bit >> 3);
  const int sh = int(bit & 7);
  uint64_t lo = 0;
  std::memcpy(&lo, p + byte, avail - byte < 8 ? avail - byte : 8);
  uint64_t v = lo >> sh;
  if (sh + w > 64) v |= uint64_t(p[byte + 8]) << (64 - sh);
  return w == 64 ? v : v & ((uint64_t(1) << w) - 1);
}

}  // namespace

size_t delta_binary_decode(const uint8_t* data, size_t size, uint64_t* out, size_t count) {
  Cursor c{data, data + size};
  const uint64_t block = c.varint();
  const uint64_t minis = c.varint();
  const uint64_t total = c.varint();
  uint64_t value = c.zigzag();
  if (block == 0 || block % 128 != 0 || block > kMaxBlock) bad("block size " + std::to_string(block));
  if (minis == 0 || block % minis != 0 || (block / minis) % 32 != 0) bad(std::to_string(minis) + " miniblocks in a block of " + std::to_string(block));
  if (total != count) bad("it holds " + std::to_string(total) + " values where the page has " + std::to_string(count));
  if (count == 0) return size_t(c.p - data);
  const uint64_t per_mini = block / minis;
  out[0] = value;
  size_t done = 1;
  while (done < count) {
    const uint64_t min_delta = c.zigzag();
    if (uint64_t(c.end - c.p) < minis) bad("a block's bit widths are cut short");
    const uint8_t* widths = c.p;
    c.p += minis;
    for (uint64_t m = 0; m < minis && done < count; m++) {
      const int w = widths[m];
      if (w > 64) bad("bit width " + std::to_string(w));
      const uint64_t bytes = per_mini * uint64_t(w) / 8;  // per_mini is a multiple of 32
      if (bytes > uint64_t(c.end - c.p)) bad("a miniblock runs past the end of the data");
      const size_t take = size_t(per_mini < count - done ? per_mini : count - done);
      for (size_t i = 0; i < take; i++) {
        const uint64_t d = w == 0 ? 0 : bits_at(c.p, size_t(bytes), uint64_t(i) * uint64_t(w), w);
        value += min_delta + d;
        out[done + i] = value;
      }
      c.p += bytes;
      done += take;
    }
  }
  return size_t(c.p - data);
}

}  // namespace sable::parquet
