// Zstandard through the system's libzstd.so.1, opened with dlopen at first use so the addon
// neither needs zstd to build nor fails to load without it: a ZSTD chunk on a machine without
// the library is refused (Error(unsupported)) and the caller falls back to another decoder.
// SABLE_ZSTD_LIBRARY names another file to open (tests use it to see the refusal).
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable::parquet {

// Decodes src into dst, which must be exactly `expected` bytes.
void zstd_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t expected);

}  // namespace sable::parquet
