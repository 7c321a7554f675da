// A malloc'd byte buffer whose ownership can be handed out whole: the binding gives it to an
// external ArrayBuffer (no copy of a decoded column), which frees it with free().
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace sable::parquet {

class OwnedBytes {
 public:
  OwnedBytes() = default;
  OwnedBytes(const OwnedBytes&) = delete;
  OwnedBytes& operator=(const OwnedBytes&) = delete;
  OwnedBytes(OwnedBytes&& o) noexcept { *this = std::move(o); }
  OwnedBytes& operator=(OwnedBytes&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
    return *this;
  }
  ~OwnedBytes() { std::free(data_); }

  // Room for `cap` bytes in all (never less than one, so data() is never null).
  void reserve(size_t cap) {
    if (cap <= cap_ && data_) return;
    if (cap == 0) cap = 1;
    void* p = std::realloc(data_, cap);
    if (!p) throw std::bad_alloc();
    data_ = static_cast<uint8_t*>(p);
    cap_ = cap;
  }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }
  void set_size(size_t n) { size_ = n; }
  // The buffer, now the caller's to free().
  uint8_t* release() {
    uint8_t* p = data_;
    data_ = nullptr;
    size_ = cap_ = 0;
    return p;
  }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
};

}  // namespace sable::parquet
