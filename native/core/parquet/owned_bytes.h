// A byte buffer whose ownership can be handed out whole: the binding gives it to an external
// ArrayBuffer (no copy of a decoded column), which frees it through free_released(). Large
// buffers are mapped on their own and asked for transparent huge pages: a decoded row group's
// values are written once, and first-touch faults on 4 KiB pages cost more than the decoding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sable::parquet {

class OwnedBytes {
 public:
  // What release() hands out, and what free_released() takes back.
  struct Released {
    uint8_t* data;
    size_t mapped;  // 0: malloc'd
  };

  OwnedBytes() = default;
  OwnedBytes(const OwnedBytes&) = delete;
  OwnedBytes& operator=(const OwnedBytes&) = delete;
  OwnedBytes(OwnedBytes&& o) noexcept { *this = std::move(o); }
  OwnedBytes& operator=(OwnedBytes&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
    std::swap(mapped_, o.mapped_);
    return *this;
  }
  ~OwnedBytes() { free_released({data_, mapped_}); }

  // Room for `cap` bytes in all (never less than one, so data() is never null); the contents
  // are kept.
  void reserve(size_t cap) {
    if (cap <= cap_ && data_) return;
    if (cap == 0) cap = 1;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (cap >= kMapFrom) {
      const size_t bytes = (cap + kHuge - 1) / kHuge * kHuge;
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      madvise(p, bytes, MADV_HUGEPAGE);
      if (data_) std::memcpy(p, data_, cap_);  // all of it, as realloc keeps it
      free_released({data_, mapped_});
      data_ = static_cast<uint8_t*>(p);
      cap_ = bytes;
      mapped_ = bytes;
      return;
    }
#endif
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
  // The buffer, now the caller's to free_released().
  Released release() {
    Released r{data_, mapped_};
    data_ = nullptr;
    size_ = cap_ = mapped_ = 0;
    return r;
  }
  static void free_released(Released r) {
    if (!r.data) return;
#if defined(__linux__)
    if (r.mapped) {
      munmap(r.data, r.mapped);
      return;
    }
#endif
    std::free(r.data);
  }

 private:
  static constexpr size_t kHuge = size_t(2) << 20;
  static constexpr size_t kMapFrom = size_t(4) << 20;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
  size_t mapped_ = 0;
};

}  // namespace sable::parquet
