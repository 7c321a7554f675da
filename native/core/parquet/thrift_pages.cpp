#include "thrift_pages.h"

#include <limits>
#include <string>

#include "../common.h"

namespace sable::parquet {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(Code::invalid_argument, "corrupt page header: " + what); }

enum Wire : uint8_t { kTrue = 1, kFalse = 2, kByte = 3, kI16 = 4, kI32 = 5, kI64 = 6, kDouble = 7, kBinary = 8, kList = 9, kSet = 10, kMap = 11, kStruct = 12 };

// Statistics are the deepest thing a page header holds; anything past this is hostile.
constexpr int kMaxDepth = 8;

class Compact {
 public:
  Compact(const uint8_t* p, size_t n) : begin_(p), p_(p), end_(p + n) {}
  size_t consumed() const { return size_t(p_ - begin_); }

  uint8_t byte() {
    if (p_ == end_) bad("the header runs past the end of the chunk");
    return *p_++;
  }
  uint64_t varint() {
    uint64_t out = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      const uint8_t b = byte();
      out |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return out;
    }
    bad("a varint is too long");
  }
  int64_t zigzag() {
    const uint64_t v = varint();
    return int64_t(v >> 1) ^ -int64_t(v & 1);
  }
  int32_t i32(const char* field) {
    const int64_t v = zigzag();
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) bad(std::string(field) + " is out of the 32-bit range");
    return int32_t(v);
  }
  void skip_bytes(uint64_t n) {
    if (n > uint64_t(end_ - p_)) bad("a field runs past the end of the chunk");
    p_ += n;
  }
  // A collection's size, refused when the bytes left cannot hold that many items (each item is
  // at least one byte).
  uint64_t count(uint64_t n) {
    if (n > uint64_t(end_ - p_)) bad("a collection declares more items than the chunk holds");
    return n;
  }

  void skip(uint8_t type, int depth) {
    if (depth > kMaxDepth) bad("structures nest too deep");
    switch (type) {
      case kTrue:
      case kFalse:
        return;
      case kByte:
        skip_bytes(1);
        return;
      case kI16:
      case kI32:
      case kI64:
        varint();
        return;
      case kDouble:
        skip_bytes(8);
        return;
      case kBinary:
        skip_bytes(varint());
        return;
      case kList:
      case kSet: {
        const uint8_t head = byte();
        const uint64_t n = count((head >> 4) == 15 ? varint() : uint64_t(head >> 4));
        const uint8_t elem = head & 15;
        for (uint64_t i = 0; i < n; i++) skip_element(elem, depth + 1);
        return;
      }
      case kMap: {
        const uint64_t n = count(varint());
        if (n == 0) return;
        const uint8_t kinds = byte();
        for (uint64_t i = 0; i < n; i++) {
          skip_element(kinds >> 4, depth + 1);
          skip_element(kinds & 15, depth + 1);
        }
        return;
      }
      case kStruct:
        skip_struct(depth + 1);
        return;
      default:
        bad("unknown field type " + std::to_string(type));
    }
  }

  // The next field of a struct: false at its end.
  bool field(int16_t& last, int16_t& id, uint8_t& type) {
    const uint8_t head = byte();
    if (head == 0) return false;
    type = head & 15;
    const int delta = head >> 4;
    if (delta == 0) {
      const int64_t v = zigzag();
      if (v < std::numeric_limits<int16_t>::min() || v > std::numeric_limits<int16_t>::max()) bad("a field id is out of range");
      id = int16_t(v);
    } else {
      id = int16_t(last + delta);
    }
    last = id;
    return true;
  }

  void skip_struct(int depth) {
    int16_t last = 0, id = 0;
    uint8_t type = 0;
    while (field(last, id, type)) skip(type, depth);
  }

 private:
  // Booleans inside collections take a byte each, unlike struct fields.
  void skip_element(uint8_t type, int depth) {
    if (type == kTrue || type == kFalse) skip_bytes(1);
    else skip(type, depth);
  }

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
};

void expect(uint8_t type, uint8_t want, const char* field) {
  if (type != want) bad(std::string(field) + " has the wrong type");
}

// A required i32 field: its wire type checked, then its value.
int32_t i32_field(Compact& c, uint8_t type, const char* field) {
  expect(type, kI32, field);
  return c.i32(field);
}

bool boolean(uint8_t type, const char* field) {
  if (type != kTrue && type != kFalse) bad(std::string(field) + " has the wrong type");
  return type == kTrue;
}

void read_data_v1(Compact& c, PageHeader& h) {
  int16_t last = 0, id = 0;
  uint8_t type = 0;
  while (c.field(last, id, type)) {
    switch (id) {
      case 1: h.num_values = i32_field(c, type, "num_values"); break;
      case 2: h.encoding = i32_field(c, type, "encoding"); break;
      case 3: h.def_encoding = i32_field(c, type, "definition_level_encoding"); break;
      case 4: h.rep_encoding = i32_field(c, type, "repetition_level_encoding"); break;
      default: c.skip(type, 1);
    }
  }
  if (h.num_values < 0 || h.encoding < 0 || h.def_encoding < 0 || h.rep_encoding < 0) bad("a data page header lacks a required field or holds a negative one");
}

void read_dictionary(Compact& c, PageHeader& h) {
  int16_t last = 0, id = 0;
  uint8_t type = 0;
  while (c.field(last, id, type)) {
    switch (id) {
      case 1: h.num_values = i32_field(c, type, "num_values"); break;
      case 2: h.encoding = i32_field(c, type, "encoding"); break;
      default: c.skip(type, 1);
    }
  }
  if (h.num_values < 0 || h.encoding < 0) bad("a dictionary page header lacks a required field or holds a negative one");
}

void read_data_v2(Compact& c, PageHeader& h) {
  int16_t last = 0, id = 0;
  uint8_t type = 0;
  while (c.field(last, id, type)) {
    switch (id) {
      case 1: h.num_values = i32_field(c, type, "num_values"); break;
      case 2: h.num_nulls = i32_field(c, type, "num_nulls"); break;
      case 3: h.num_rows = i32_field(c, type, "num_rows"); break;
      case 4: h.encoding = i32_field(c, type, "encoding"); break;
      case 5: h.def_length = i32_field(c, type, "definition_levels_byte_length"); break;
      case 6: h.rep_length = i32_field(c, type, "repetition_levels_byte_length"); break;
      case 7: h.is_compressed = boolean(type, "is_compressed"); break;
      default: c.skip(type, 1);
    }
  }
  if (h.num_values < 0 || h.num_nulls < 0 || h.num_rows < 0 || h.encoding < 0 || h.def_length < 0 || h.rep_length < 0)
    bad("a v2 data page header lacks a required field or holds a negative one");
}

}  // namespace

size_t read_page_header(const uint8_t* data, size_t size, PageHeader& h) {
  h = PageHeader{};
  Compact c(data, size);
  int16_t last = 0, id = 0;
  uint8_t type = 0;
  while (c.field(last, id, type)) {
    switch (id) {
      case 1: h.type = i32_field(c, type, "type"); break;
      case 2: h.uncompressed_size = i32_field(c, type, "uncompressed_page_size"); break;
      case 3: h.compressed_size = i32_field(c, type, "compressed_page_size"); break;
      case 5: expect(type, kStruct, "data_page_header"); read_data_v1(c, h); h.has_v1 = true; break;
      case 7: expect(type, kStruct, "dictionary_page_header"); read_dictionary(c, h); h.has_dictionary = true; break;
      case 8: expect(type, kStruct, "data_page_header_v2"); read_data_v2(c, h); h.has_v2 = true; break;
      default: c.skip(type, 1);
    }
  }
  if (h.type < 0 || h.uncompressed_size < 0 || h.compressed_size < 0) bad("type, uncompressed_page_size or compressed_page_size is missing or negative");
  if (int(h.has_v1) + int(h.has_dictionary) + int(h.has_v2) > 1) bad("more than one page kind in one header");
  return c.consumed();
}

}  // namespace sable::parquet
