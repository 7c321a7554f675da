// Binary snapshot files: a magic number, a format version, a body, and a trailing checksum of
// the body, so a truncated or foreign file is reported as corrupt and never trusted.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "common.h"

namespace sable {

constexpr uint64_t kSnapshotMagic = 0x31474553454C4241ull;  // "ABLESEG1" little-endian tag
// 2: segments say whether their rows are float32 or half precision.
// 3: segments keep their tombstoned rows, so a snapshot is the segment as it was, deletes included.
constexpr uint32_t kSnapshotVersion = 3;
// Older versions this build still reads (what they lack, the engine restores from LMDB).
constexpr uint32_t kOldestReadableSnapshotVersion = 2;

// Writes to `path + ".tmp"`, fsyncs, then renames over `path` on commit(): readers never see a
// half-written snapshot.
class Writer {
 public:
  explicit Writer(const std::string& path);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void bytes(const void* p, size_t n);
  void u8(uint8_t v) { bytes(&v, 1); }
  void u32(uint32_t v) { bytes(&v, 4); }
  void u64(uint64_t v) { bytes(&v, 8); }
  void f32(float v) { bytes(&v, 4); }
  void str(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    u64(v.size());
    bytes(v.data(), v.size() * sizeof(T));
  }
  // Returns the checksum written, which names this snapshot: a reader can ask for exactly it.
  uint64_t commit();

 private:
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
  // The checksum runs over 8-byte words of the whole body, so bytes written in pieces are carried
  // here until a word is complete: the reader hashes the body in one piece and must agree.
  uint64_t hash_;
  uint8_t carry_[8];
  size_t carried_ = 0;
  bool committed_ = false;
};

class Reader {
 public:
  // Reads the whole file, checks magic, version and checksum; throws Error(Code::snapshot_corrupt).
  explicit Reader(const std::string& path);

  void bytes(void* p, size_t n);
  uint8_t u8() { uint8_t v; bytes(&v, 1); return v; }
  uint32_t u32() { uint32_t v; bytes(&v, 4); return v; }
  uint64_t u64() { uint64_t v; bytes(&v, 8); return v; }
  float f32() { float v; bytes(&v, 4); return v; }
  std::string str() {
    std::string s(checked_count(u64(), 1), '\0');
    bytes(s.data(), s.size());
    return s;
  }
  template <class T>
  std::vector<T> vec() {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> v(checked_count(u64(), sizeof(T)));
    bytes(v.data(), v.size() * sizeof(T));
    return v;
  }
  bool at_end() const { return pos_ == end_; }
  uint32_t version() const { return version_; }
  uint64_t stored_checksum() const { return checksum_; }

 private:
  size_t checked_count(uint64_t n, size_t elem);
  std::vector<uint8_t> data_;
  size_t pos_ = 0, end_ = 0;
  uint32_t version_ = 0;
  uint64_t checksum_ = 0;
};

// Checksum of a byte range, continuing from `seed`.
uint64_t checksum(const void* p, size_t n, uint64_t seed);

}  // namespace sable
