#include "io.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace sable {

uint64_t checksum(const void* p, size_t n, uint64_t h) {
  // FNV-1a over 8-byte words, then the tail bytes: fast enough for gigabyte snapshots and
  // sensitive to truncation and bit flips, which is all it is for.
  const uint8_t* b = static_cast<const uint8_t*>(p);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static constexpr uint64_t kChecksumSeed = 0xcbf29ce484222325ull;

Writer::Writer(const std::string& path) : path_(path), tmp_(path + ".tmp"), hash_(kChecksumSeed) {
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw Error(Code::io_error, "cannot write snapshot " + tmp_);
  uint64_t magic = kSnapshotMagic;
  uint32_t version = kSnapshotVersion;
  if (std::fwrite(&magic, 8, 1, f_) != 1 || std::fwrite(&version, 4, 1, f_) != 1)
    throw Error(Code::io_error, "cannot write snapshot " + tmp_);
}

Writer::~Writer() {
  if (f_) std::fclose(f_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void Writer::bytes(const void* p, size_t n) {
  if (n && std::fwrite(p, 1, n, f_) != n) throw Error(Code::io_error, "short write to snapshot " + tmp_);
  const uint8_t* b = static_cast<const uint8_t*>(p);
  if (carried_) {
    size_t take = std::min(n, 8 - carried_);
    std::memcpy(carry_ + carried_, b, take);
    carried_ += take;
    b += take;
    n -= take;
    if (carried_ < 8) return;
    hash_ = checksum(carry_, 8, hash_);
    carried_ = 0;
  }
  size_t whole = n & ~size_t{7};
  hash_ = checksum(b, whole, hash_);
  std::memcpy(carry_, b + whole, n - whole);
  carried_ = n - whole;
}

uint64_t Writer::commit() {
  hash_ = checksum(carry_, carried_, hash_);
  carried_ = 0;
  if (std::fwrite(&hash_, 8, 1, f_) != 1 || std::fflush(f_) != 0 || ::fsync(fileno(f_)) != 0)
    throw Error(Code::io_error, "cannot flush snapshot " + tmp_);
  std::fclose(f_);
  f_ = nullptr;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) throw Error(Code::io_error, "cannot rename snapshot to " + path_);
  committed_ = true;
  return hash_;
}

Reader::Reader(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(Code::snapshot_missing, "snapshot " + path + " does not exist");
  std::fseek(f, 0, SEEK_END);
  long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (size < 20) {
    std::fclose(f);
    throw Error(Code::snapshot_corrupt, "snapshot " + path + " is truncated");
  }
  data_.resize(size_t(size));
  size_t got = std::fread(data_.data(), 1, data_.size(), f);
  std::fclose(f);
  if (got != data_.size()) throw Error(Code::snapshot_corrupt, "snapshot " + path + " could not be read whole");
  uint64_t magic;
  uint32_t version;
  std::memcpy(&magic, data_.data(), 8);
  std::memcpy(&version, data_.data() + 8, 4);
  if (magic != kSnapshotMagic) throw Error(Code::snapshot_corrupt, "snapshot " + path + " is not a sable snapshot");
  if (version < kOldestReadableSnapshotVersion || version > kSnapshotVersion)
    throw Error(Code::snapshot_corrupt, "snapshot " + path + " has format version " + std::to_string(version) +
                                        ", this build reads " + std::to_string(kOldestReadableSnapshotVersion) +
                                        " to " + std::to_string(kSnapshotVersion));
  version_ = version;
  pos_ = 12;
  end_ = data_.size() - 8;
  uint64_t stored;
  std::memcpy(&stored, data_.data() + end_, 8);
  if (checksum(data_.data() + pos_, end_ - pos_, kChecksumSeed) != stored)
    throw Error(Code::snapshot_corrupt, "snapshot " + path + " fails its checksum");
  checksum_ = stored;
}

size_t Reader::checked_count(uint64_t n, size_t elem) {
  if (elem && n > (end_ - pos_) / elem) throw Error(Code::snapshot_corrupt, "snapshot length field exceeds the file");
  return size_t(n);
}

void Reader::bytes(void* p, size_t n) {
  if (n == 0) return;
  if (n > end_ - pos_) throw Error(Code::snapshot_corrupt, "snapshot ends early");
  std::memcpy(p, data_.data() + pos_, n);
  pos_ += n;
}

}  // namespace sable
