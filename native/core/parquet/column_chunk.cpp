#include "column_chunk.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "../common.h"
#include "delta.h"
#include "gzip_dl.h"
#include "rle_hybrid.h"
#include "snappy.h"
#include "thrift_pages.h"
#include "zstd_dl.h"

namespace sable::parquet {

namespace {

[[noreturn]] void corrupt(const std::string& what) { throw Error(Code::invalid_argument, "corrupt column chunk: " + what); }
[[noreturn]] void refuse(const std::string& what) { throw Error(Code::unsupported, "the native Parquet reader does not support " + what); }

const char* codec_name(int32_t c) {
  static const char* names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  return c >= 0 && c < 8 ? names[c] : "an unknown codec";
}

const char* type_name(int32_t t) {
  static const char* names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return t >= 0 && t < 8 ? names[t] : "an unknown type";
}

uint32_t le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only (x86-64, aarch64)
}

class Decoder {
 public:
  Decoder(const ChunkSpec& s) : spec_(s) {}

  DecodedChunk run(const uint8_t* chunk, size_t size) {
    check_spec();
    const uint64_t n = uint64_t(spec_.num_values);
    out_.levels = 0;
    if (spec_.max_def > 0) reserve(out_.def, n);
    if (spec_.max_rep > 0) reserve(out_.rep, n);
    if (type_ == Physical::byte_array) {
      reserve(out_.offsets, (n + 1) * 4);
      std::memset(out_.offsets.data(), 0, 4);
    } else {
      reserve(out_.data, n * width_);
    }
    size_t pos = 0;
    uint64_t declared = 0;  // header and uncompressed body bytes so far
    for (int page = 0; pos < size; page++) {
      PageHeader h;
      const size_t header = read_page_header(chunk + pos, size - pos, h);
      pos += header;
      if (size_t(h.compressed_size) > size - pos) {
        corrupt("page " + std::to_string(page) + " declares " + std::to_string(h.compressed_size) + " bytes; the chunk holds " +
                std::to_string(size - pos) + " more");
      }
      declared += header + uint64_t(h.uncompressed_size);
      if (declared > uint64_t(spec_.uncompressed_size)) {
        corrupt("the pages' uncompressed sizes pass the chunk's declared total_uncompressed_size (" + std::to_string(spec_.uncompressed_size) + ")");
      }
      const uint8_t* body = chunk + pos;
      pos += size_t(h.compressed_size);
      switch (PageType(h.type)) {
        case PageType::dictionary:
          if (!h.has_dictionary) corrupt("a dictionary page has no dictionary_page_header");
          dictionary_page(h, body);
          break;
        case PageType::data:
          if (!h.has_v1) corrupt("a data page has no data_page_header");
          data_page_v1(h, body);
          break;
        case PageType::data_v2:
          if (!h.has_v2) corrupt("a v2 data page has no data_page_header_v2");
          data_page_v2(h, body);
          break;
        case PageType::index:
          break;
        default:
          corrupt("unknown page type " + std::to_string(h.type));
      }
    }
    if (out_.levels != n) corrupt("the pages hold " + std::to_string(out_.levels) + " values; the column metadata declares " + std::to_string(n));
    out_.data.set_size(type_ == Physical::byte_array ? bytes_used_ : size_t(out_.values * width_));
    out_.offsets.set_size(type_ == Physical::byte_array ? size_t(out_.values + 1) * 4 : 0);
    out_.def.set_size(spec_.max_def > 0 ? size_t(n) : 0);
    out_.rep.set_size(spec_.max_rep > 0 ? size_t(n) : 0);
    summarise();
    return std::move(out_);
  }

 private:
  void summarise() {
    const uint64_t n = out_.levels;
    if (spec_.max_rep == 0) {
      out_.records = n;
      out_.record_length = 1;
    } else {
      const uint8_t* r = out_.rep.data();
      uint64_t records = 0;
      // Uniform when record k starts exactly at k * the first record's length.
      uint64_t first_len = 0;
      while (first_len + 1 < n && r[first_len + 1] != 0) first_len++;
      first_len = n == 0 ? 0 : first_len + 1;
      bool uniform = n > 0 && r[0] == 0;
      for (uint64_t i = 0; i < n; i++) records += r[i] == 0;
      if (uniform) {
        for (uint64_t at = 0; uniform && at < n; at += first_len) {
          if (r[at] != 0) uniform = false;
          for (uint64_t j = at + 1; uniform && j < at + first_len && j < n; j++) uniform = r[j] != 0;
        }
        uniform = uniform && n % first_len == 0;
      }
      out_.records = records;
      out_.record_length = uniform ? int64_t(first_len) : -1;
    }
    // Float64 vectors are checked after their narrowing to float32 (a double can be finite and
    // still past float32's range), so only float32 values are scanned here.
    if (type_ == Physical::float32) out_.first_non_finite = first_non_finite<uint32_t>(0x7f800000u);
  }

  // Exponent bits all set: NaN or infinity. One branch-free pass, then the index if any.
  template <class U>
  int64_t first_non_finite(U exponent) const {
    const U* v = reinterpret_cast<const U*>(out_.data.data());
    const uint64_t n = out_.values;
    uint64_t found = 0;
    for (uint64_t i = 0; i < n; i++) found |= (v[i] & exponent) == exponent;
    if (!found) return -1;
    for (uint64_t i = 0; i < n; i++)
      if ((v[i] & exponent) == exponent) return int64_t(i);
    return -1;
  }

  void check_spec() {
    if (spec_.physical < 0 || spec_.physical > 7) corrupt("physical type " + std::to_string(spec_.physical) + " is unknown");
    type_ = Physical(spec_.physical);
    switch (type_) {
      case Physical::boolean: width_ = 1; break;
      case Physical::int32:
      case Physical::float32: width_ = 4; break;
      case Physical::int64:
      case Physical::float64: width_ = 8; break;
      case Physical::byte_array: width_ = 0; break;
      default: refuse(std::string("physical type ") + type_name(spec_.physical));
    }
    const Codec c = Codec(spec_.codec);
    if (c != Codec::uncompressed && c != Codec::snappy && c != Codec::zstd && c != Codec::gzip) refuse(std::string("codec ") + codec_name(spec_.codec));
    if (spec_.max_def < 0 || spec_.max_def > 255 || spec_.max_rep < 0 || spec_.max_rep > 255) refuse("levels above 255");
    if (spec_.num_values < 0 || spec_.uncompressed_size < 0) corrupt("negative num_values or total_uncompressed_size");
    if (uint64_t(spec_.uncompressed_size) > spec_.limit_bytes) {
      corrupt("the chunk declares " + std::to_string(spec_.uncompressed_size) + " uncompressed bytes, past the limit of " + std::to_string(spec_.limit_bytes));
    }
    // What the output takes at the least: the levels, and fixed-width values or offsets.
    const uint64_t per_value = (spec_.max_def > 0) + (spec_.max_rep > 0) + (type_ == Physical::byte_array ? 4 : width_);
    if (uint64_t(spec_.num_values) > spec_.limit_bytes / per_value) {
      corrupt("the chunk declares " + std::to_string(spec_.num_values) + " values, past what the limit of " + std::to_string(spec_.limit_bytes) + " bytes holds");
    }
  }

  // Every buffer grows through here, so all of them together stay under the caller's limit.
  void reserve(OwnedBytes& b, uint64_t cap) {
    if (cap <= b.capacity()) return;
    const uint64_t more = cap - b.capacity();
    if (more > spec_.limit_bytes - charged_) corrupt("decoding needs more than the limit of " + std::to_string(spec_.limit_bytes) + " bytes");
    b.reserve(size_t(cap));
    charged_ += more;
  }

  // A page's body uncompressed: the chunk's own bytes when stored plain, else the scratch buffer.
  const uint8_t* uncompress(const uint8_t* src, size_t size, size_t expected, bool compressed) {
    if (!compressed || Codec(spec_.codec) == Codec::uncompressed) {
      if (size != expected) corrupt("an uncompressed page's sizes differ (" + std::to_string(size) + " and " + std::to_string(expected) + ")");
      return src;
    }
    reserve(scratch_, expected);
    switch (Codec(spec_.codec)) {
      case Codec::snappy: snappy_decompress(src, size, scratch_.data(), expected); break;
      case Codec::zstd: zstd_decompress(src, size, scratch_.data(), expected); break;
      default: gzip_decompress(src, size, scratch_.data(), expected); break;
    }
    return scratch_.data();
  }

  uint64_t take_levels(int32_t page_values) {
    const uint64_t n = uint64_t(page_values);
    if (n > uint64_t(spec_.num_values) - out_.levels) {
      corrupt("a page claims " + std::to_string(n) + " values; the chunk has " + std::to_string(uint64_t(spec_.num_values) - out_.levels) + " left");
    }
    return n;
  }

  // Levels of one page into out.def / out.rep at the current position; checked against the max.
  void levels(const uint8_t* p, size_t size, int32_t max, OwnedBytes& into, uint64_t n) {
    uint8_t* dst = into.data() + out_.levels;
    rle_hybrid_decode(p, size, bit_width_of(uint32_t(max)), dst, size_t(n));
    uint8_t top = 0;
    for (uint64_t i = 0; i < n; i++) top = std::max(top, dst[i]);
    if (top > max) corrupt("a level of " + std::to_string(top) + " passes the column's maximum of " + std::to_string(max));
  }

  uint64_t present(uint64_t n) const {
    if (spec_.max_def == 0) return n;
    const uint8_t* d = out_.def.data() + out_.levels;
    const uint8_t max = uint8_t(spec_.max_def);
    uint64_t c = 0;
    for (uint64_t i = 0; i < n; i++) c += d[i] == max;
    return c;
  }

  // v1 levels: a 4-byte length, then the RLE/bit-packed hybrid.
  size_t levels_v1(const uint8_t* p, size_t size, int32_t encoding, int32_t max, OwnedBytes& into, uint64_t n) {
    if (encoding != kRle) refuse("level encoding " + std::to_string(encoding) + " (only RLE)");
    if (size < 4) corrupt("a page's levels are cut short");
    const uint32_t len = le32(p);
    if (len > size - 4) corrupt("a page's levels declare " + std::to_string(len) + " bytes, past the page");
    levels(p + 4, len, max, into, n);
    return 4 + size_t(len);
  }

  void data_page_v1(const PageHeader& h, const uint8_t* body) {
    const uint64_t n = take_levels(h.num_values);
    const uint8_t* p = uncompress(body, size_t(h.compressed_size), size_t(h.uncompressed_size), true);
    size_t left = size_t(h.uncompressed_size);
    if (spec_.max_rep > 0) {
      const size_t used = levels_v1(p, left, h.rep_encoding, spec_.max_rep, out_.rep, n);
      p += used;
      left -= used;
    }
    if (spec_.max_def > 0) {
      const size_t used = levels_v1(p, left, h.def_encoding, spec_.max_def, out_.def, n);
      p += used;
      left -= used;
    }
    const uint64_t count = present(n);
    values(h.encoding, p, left, count);
    out_.levels += n;
  }

  void data_page_v2(const PageHeader& h, const uint8_t* body) {
    const uint64_t n = take_levels(h.num_values);
    const uint64_t lv = uint64_t(h.rep_length) + uint64_t(h.def_length);
    if (lv > uint64_t(h.compressed_size) || lv > uint64_t(h.uncompressed_size)) corrupt("a v2 page's levels pass the page");
    if (spec_.max_rep > 0) levels(body, size_t(h.rep_length), spec_.max_rep, out_.rep, n);
    if (spec_.max_def > 0) levels(body + h.rep_length, size_t(h.def_length), spec_.max_def, out_.def, n);
    const uint64_t count = present(n);
    if (uint64_t(h.num_nulls) > n || count != n - uint64_t(h.num_nulls)) {
      corrupt("a v2 page declares " + std::to_string(h.num_nulls) + " nulls; its levels hold " + std::to_string(n - count));
    }
    const uint8_t* p = uncompress(body + lv, size_t(h.compressed_size - lv), size_t(h.uncompressed_size - lv), h.is_compressed);
    values(h.encoding, p, size_t(h.uncompressed_size - lv), count);
    out_.levels += n;
  }

  void dictionary_page(const PageHeader& h, const uint8_t* body) {
    if (dict_seen_) corrupt("a second dictionary page");
    if (out_.levels > 0) corrupt("a dictionary page after data pages");
    dict_seen_ = true;
    if (h.encoding != kPlain && h.encoding != kPlainDictionary) refuse("dictionary page encoding " + std::to_string(h.encoding));
    if (type_ == Physical::boolean) refuse("a dictionary of BOOLEAN values");
    const uint8_t* p = uncompress(body, size_t(h.compressed_size), size_t(h.uncompressed_size), true);
    const size_t size = size_t(h.uncompressed_size);
    const uint64_t count = uint64_t(h.num_values);
    if (type_ != Physical::byte_array) {
      if (count > size / width_) corrupt("a dictionary declares more values than its page holds");
      reserve(dict_data_, count * width_);
      std::memcpy(dict_data_.data(), p, size_t(count * width_));
    } else {
      if (count > size / 4) corrupt("a dictionary declares more values than its page holds");
      reserve(dict_offsets_, (count + 1) * 8);
      reserve(dict_data_, size);
      uint64_t* offs = reinterpret_cast<uint64_t*>(dict_offsets_.data());
      size_t at = 0, used = 0;
      offs[0] = 0;
      for (uint64_t i = 0; i < count; i++) {
        if (size - at < 4) corrupt("a dictionary string runs past its page");
        const uint32_t len = le32(p + at);
        at += 4;
        if (len > size - at) corrupt("a dictionary string runs past its page");
        std::memcpy(dict_data_.data() + used, p + at, len);
        at += len;
        used += len;
        offs[i + 1] = used;
      }
    }
    dict_count_ = count;
  }

  void values(int32_t encoding, const uint8_t* p, size_t size, uint64_t count) {
    if (encoding == kPlainDictionary || encoding == kRleDictionary) return dictionary_values(p, size, count);
    if (type_ == Physical::boolean && encoding == kRle) return rle_booleans(p, size, count);
    if (encoding == kDeltaBinaryPacked && (type_ == Physical::int32 || type_ == Physical::int64)) return delta_integers(p, size, count);
    if (encoding == kDeltaLengthByteArray && type_ == Physical::byte_array) return delta_strings(p, size, count, false);
    if (encoding == kDeltaByteArray && type_ == Physical::byte_array) return delta_strings(p, size, count, true);
    if (encoding != kPlain) refuse("value encoding " + std::to_string(encoding) + " for " + type_name(spec_.physical));
    switch (type_) {
      case Physical::boolean: {
        if ((count + 7) / 8 > size) corrupt("a page's booleans run past the page");
        uint8_t* dst = out_.data.data() + out_.values;
        for (uint64_t i = 0; i < count; i++) dst[i] = (p[i >> 3] >> (i & 7)) & 1;
        break;
      }
      case Physical::byte_array:
        plain_strings(p, size, count);
        return;
      default:
        if (count > size / width_) corrupt("a page's values run past the page");
        std::memcpy(out_.data.data() + out_.values * width_, p, size_t(count * width_));
    }
    out_.values += count;
  }

  // `count` integers of a delta run into the scratch of 64-bit values; the bytes it took.
  size_t delta_run(const uint8_t* p, size_t size, uint64_t count, OwnedBytes& into) {
    reserve(into, count * 8);
    return delta_binary_decode(p, size, reinterpret_cast<uint64_t*>(into.data()), size_t(count));
  }

  void delta_integers(const uint8_t* p, size_t size, uint64_t count) {
    delta_run(p, size, count, indices_);
    const uint64_t* v = reinterpret_cast<const uint64_t*>(indices_.data());
    if (width_ == 8) {
      std::memcpy(out_.data.data() + out_.values * 8, v, size_t(count * 8));
    } else {
      uint32_t* dst = reinterpret_cast<uint32_t*>(out_.data.data()) + out_.values;
      for (uint64_t i = 0; i < count; i++) dst[i] = uint32_t(v[i]);
    }
    out_.values += count;
  }

  // DELTA_LENGTH_BYTE_ARRAY: the lengths delta-encoded, then the bytes end to end. DELTA_BYTE_ARRAY:
  // first each value's prefix length shared with the value before, then the suffixes so.
  void delta_strings(const uint8_t* p, size_t size, uint64_t count, bool prefixed) {
    size_t at = 0;
    const uint64_t* prefix = nullptr;
    if (prefixed) {
      at = delta_run(p, size, count, prefixes_);
      prefix = reinterpret_cast<const uint64_t*>(prefixes_.data());
    }
    at += delta_run(p + at, size - at, count, indices_);
    const uint64_t* len = reinterpret_cast<const uint64_t*>(indices_.data());
    uint64_t suffixes = 0, total = 0;
    for (uint64_t i = 0; i < count; i++) {
      // Lengths are int32 on the wire; anything else is refused before it sizes a copy.
      if (len[i] > uint64_t(INT32_MAX) || (prefix && prefix[i] > uint64_t(INT32_MAX))) corrupt("a negative or huge string length");
      suffixes += len[i];
      total += len[i] + (prefix ? prefix[i] : 0);
    }
    if (suffixes > size - at) corrupt("a page's strings run past the page");
    string_room(total);
    int32_t* offs = reinterpret_cast<int32_t*>(out_.offsets.data()) + out_.values;
    const uint8_t* src = p + at;
    for (uint64_t i = 0; i < count; i++) {
      if (prefix && prefix[i] > 0) {
        // offs[-1] is the column's previous offset: offs starts at out_.values, past the first.
        const size_t prev_len = out_.values + i == 0 ? 0 : size_t(offs[i] - offs[int64_t(i) - 1]);
        if (prefix[i] > prev_len) corrupt("a string's prefix is longer than the string before it");
        std::memmove(out_.data.data() + bytes_used_, out_.data.data() + bytes_used_ - prev_len, size_t(prefix[i]));
        bytes_used_ += size_t(prefix[i]);
      }
      std::memcpy(out_.data.data() + bytes_used_, src, size_t(len[i]));
      src += len[i];
      bytes_used_ += size_t(len[i]);
      offs[i + 1] = int32_t(bytes_used_);
    }
    out_.values += count;
  }

  void rle_booleans(const uint8_t* p, size_t size, uint64_t count) {
    if (size < 4) corrupt("a page's booleans are cut short");
    const uint32_t len = le32(p);
    if (len > size - 4) corrupt("a page's booleans run past the page");
    rle_hybrid_decode(p + 4, len, 1, out_.data.data() + out_.values, size_t(count));
    out_.values += count;
  }

  // Room for `more` bytes of strings, growing by half again so many pages do not copy often.
  void string_room(uint64_t more) {
    const uint64_t need = uint64_t(bytes_used_) + more;
    if (need > uint64_t(INT32_MAX)) refuse("more than 2 GiB of strings in one column chunk");
    if (need <= out_.data.capacity()) return;
    const uint64_t grown = std::max<uint64_t>(need, out_.data.capacity() + out_.data.capacity() / 2);
    if (grown - out_.data.capacity() <= spec_.limit_bytes - charged_) reserve(out_.data, grown);
    else reserve(out_.data, need);
  }

  void plain_strings(const uint8_t* p, size_t size, uint64_t count) {
    // Each value takes at least its 4-byte length, so the page bounds the bytes out.
    if (count > size / 4) corrupt("a page declares more strings than it holds");
    string_room(size - count * 4);
    int32_t* offs = reinterpret_cast<int32_t*>(out_.offsets.data()) + out_.values;
    size_t at = 0;
    for (uint64_t i = 0; i < count; i++) {
      if (size - at < 4) corrupt("a string runs past its page");
      const uint32_t len = le32(p + at);
      at += 4;
      if (len > size - at) corrupt("a string runs past its page");
      std::memcpy(out_.data.data() + bytes_used_, p + at, len);
      at += len;
      bytes_used_ += len;
      offs[i + 1] = int32_t(bytes_used_);
    }
    out_.values += count;
  }

  void dictionary_values(const uint8_t* p, size_t size, uint64_t count) {
    if (!dict_seen_) corrupt("dictionary-encoded values with no dictionary page");
    if (count == 0) return;
    if (size < 1) corrupt("dictionary indices are cut short");
    const int w = p[0];
    if (w > 32) corrupt("dictionary index width " + std::to_string(w));
    reserve(indices_, count * 4);
    uint32_t* idx = reinterpret_cast<uint32_t*>(indices_.data());
    rle_hybrid_decode(p + 1, size - 1, w, idx, size_t(count));
    uint32_t top = 0;
    for (uint64_t i = 0; i < count; i++) top = std::max(top, idx[i]);
    if (top >= dict_count_) corrupt("a dictionary index of " + std::to_string(top) + " in a dictionary of " + std::to_string(dict_count_));
    if (type_ == Physical::byte_array) {
      const uint64_t* d = reinterpret_cast<const uint64_t*>(dict_offsets_.data());
      uint64_t total = 0;
      for (uint64_t i = 0; i < count; i++) total += d[idx[i] + 1] - d[idx[i]];
      string_room(total);
      int32_t* offs = reinterpret_cast<int32_t*>(out_.offsets.data()) + out_.values;
      for (uint64_t i = 0; i < count; i++) {
        const uint64_t from = d[idx[i]], len = d[idx[i] + 1] - from;
        std::memcpy(out_.data.data() + bytes_used_, dict_data_.data() + from, size_t(len));
        bytes_used_ += size_t(len);
        offs[i + 1] = int32_t(bytes_used_);
      }
    } else if (width_ == 4) {
      const uint32_t* d = reinterpret_cast<const uint32_t*>(dict_data_.data());
      uint32_t* dst = reinterpret_cast<uint32_t*>(out_.data.data()) + out_.values;
      for (uint64_t i = 0; i < count; i++) dst[i] = d[idx[i]];
    } else {
      const uint64_t* d = reinterpret_cast<const uint64_t*>(dict_data_.data());
      uint64_t* dst = reinterpret_cast<uint64_t*>(out_.data.data()) + out_.values;
      for (uint64_t i = 0; i < count; i++) dst[i] = d[idx[i]];
    }
    out_.values += count;
  }

  const ChunkSpec& spec_;
  Physical type_ = Physical::boolean;
  uint64_t width_ = 0;
  uint64_t charged_ = 0;
  DecodedChunk out_;
  size_t bytes_used_ = 0;
  OwnedBytes scratch_;
  OwnedBytes indices_;
  bool dict_seen_ = false;
  uint64_t dict_count_ = 0;
  OwnedBytes dict_data_;
  OwnedBytes dict_offsets_;
  OwnedBytes prefixes_;
};

}  // namespace

DecodedChunk decode_column_chunk(const uint8_t* chunk, size_t size, const ChunkSpec& spec) {
  return Decoder(spec).run(chunk, size);
}

}  // namespace sable::parquet
