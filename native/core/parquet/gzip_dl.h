// GZIP through the system's libz.so.1, opened with dlopen at first use like zstd_dl.h: the addon
// links no zlib, and a GZIP chunk where the library (or, at build time, zlib.h) is missing is
// refused (Error(unsupported)) for the caller to fall back. SABLE_ZLIB_LIBRARY names another file.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sable::parquet {

// Decodes the gzip stream (one or more members) src into dst, exactly `expected` bytes.
void gzip_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t expected);

}  // namespace sable::parquet
