#include "zstd_dl.h"

#include <dlfcn.h>

#include <string>

#include "../common.h"
#include "codec_library.h"

namespace sable::parquet {

namespace {

// The three functions of zstd.h this needs, declared here so no header is needed to build.
using DecompressFn = size_t (*)(void* dst, size_t capacity, const void* src, size_t size);
using IsErrorFn = unsigned (*)(size_t code);
using ErrorNameFn = const char* (*)(size_t code);

struct Zstd {
  DecompressFn decompress = nullptr;
  IsErrorFn is_error = nullptr;
  ErrorNameFn error_name = nullptr;
  std::string why;  // set when unavailable
};

Zstd load() {
  Zstd z;
  const CodecLibrary lib = open_codec_library("SABLE_ZSTD_LIBRARY", "libzstd.so.1", "ZSTD");
  if (!lib.handle) {
    z.why = lib.why;
    return z;
  }
  void* const handle = lib.handle;
  const std::string& name = lib.name;
  z.decompress = reinterpret_cast<DecompressFn>(dlsym(handle, "ZSTD_decompress"));
  z.is_error = reinterpret_cast<IsErrorFn>(dlsym(handle, "ZSTD_isError"));
  z.error_name = reinterpret_cast<ErrorNameFn>(dlsym(handle, "ZSTD_getErrorName"));
  if (!z.decompress || !z.is_error || !z.error_name) {
    z.decompress = nullptr;
    z.why = std::string("codec unavailable: ") + name + " lacks ZSTD_decompress, ZSTD_isError or ZSTD_getErrorName";
  }
  return z;
}

const Zstd& zstd() {
  static const Zstd z = load();  // thread-safe once
  return z;
}

}  // namespace

void zstd_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t expected) {
  const Zstd& z = zstd();
  if (!z.decompress) throw Error(Code::unsupported, z.why);
  const size_t got = z.decompress(dst, expected, src, size);
  if (z.is_error(got)) throw Error(Code::invalid_argument, std::string("corrupt ZSTD data: ") + z.error_name(got));
  if (got != expected) {
    throw Error(Code::invalid_argument, "corrupt ZSTD data: it holds " + std::to_string(got) +
                                            " bytes where the page header declares " + std::to_string(expected));
  }
}

}  // namespace sable::parquet
