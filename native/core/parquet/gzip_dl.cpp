#include "gzip_dl.h"

#include <string>

#include "../common.h"

#if __has_include(<zlib.h>)
#include <dlfcn.h>
#include <zlib.h>

#include "codec_library.h"

#include <cstdlib>
#include <limits>

namespace sable::parquet {

namespace {

// zlib.h is read only for z_stream and the constants; the functions come from dlsym.
using InflateInitFn = int (*)(z_streamp, int, const char*, int);
using InflateFn = int (*)(z_streamp, int);
using InflateEndFn = int (*)(z_streamp);
using InflateResetFn = int (*)(z_streamp);

struct Zlib {
  InflateInitFn init = nullptr;
  InflateFn inflate = nullptr;
  InflateEndFn end = nullptr;
  InflateResetFn reset = nullptr;
  std::string why;
};

Zlib load() {
  Zlib z;
  const CodecLibrary lib = open_codec_library("SABLE_ZLIB_LIBRARY", "libz.so.1", "GZIP");
  if (!lib.handle) {
    z.why = lib.why;
    return z;
  }
  void* const handle = lib.handle;
  const std::string& name = lib.name;
  z.init = reinterpret_cast<InflateInitFn>(dlsym(handle, "inflateInit2_"));
  z.inflate = reinterpret_cast<InflateFn>(dlsym(handle, "inflate"));
  z.end = reinterpret_cast<InflateEndFn>(dlsym(handle, "inflateEnd"));
  z.reset = reinterpret_cast<InflateResetFn>(dlsym(handle, "inflateReset"));
  if (!z.init || !z.inflate || !z.end || !z.reset) {
    z.init = nullptr;
    z.why = std::string("codec unavailable: ") + name + " lacks inflateInit2_, inflate, inflateReset or inflateEnd";
  }
  return z;
}

const Zlib& zlib() {
  static const Zlib z = load();
  return z;
}

[[noreturn]] void bad(const std::string& what) { throw Error(Code::invalid_argument, "corrupt GZIP data: " + what); }

}  // namespace

void gzip_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t expected) {
  const Zlib& z = zlib();
  if (!z.init) throw Error(Code::unsupported, z.why);
  if (size > std::numeric_limits<uInt>::max() || expected > std::numeric_limits<uInt>::max()) bad("a page of 4 GiB or more");
  z_stream s{};
  // 16 + MAX_WBITS: gzip framing only.
  if (z.init(&s, 16 + MAX_WBITS, ZLIB_VERSION, int(sizeof(z_stream))) != Z_OK) throw Error(Code::internal, "zlib could not start inflating");
  s.next_in = const_cast<Bytef*>(src);
  s.avail_in = uInt(size);
  s.next_out = dst;
  s.avail_out = uInt(expected);
  std::string error;
  for (;;) {
    const int rc = z.inflate(&s, Z_FINISH);
    if (rc == Z_STREAM_END) {
      // Concatenated members are one stream in gzip's terms.
      if (s.avail_in == 0 || s.avail_out == 0) break;
      if (z.reset(&s) != Z_OK) { error = "a member after the first cannot start"; break; }
      continue;
    }
    error = s.msg ? s.msg : (rc == Z_BUF_ERROR ? "the data ends early or holds more than the page header declares" : "inflate failed");
    break;
  }
  const size_t got = expected - s.avail_out;
  const bool trailing = s.avail_in != 0;
  z.end(&s);
  if (!error.empty()) bad(error);
  if (trailing) bad("bytes after the end of the stream");
  if (got != expected) bad("it holds " + std::to_string(got) + " bytes where the page header declares " + std::to_string(expected));
}

}  // namespace sable::parquet

#else

namespace sable::parquet {

void gzip_decompress(const uint8_t*, size_t, uint8_t*, size_t) {
  throw Error(Code::unsupported, "codec unavailable: this build of the native Parquet reader has no GZIP (zlib.h was missing)");
}

}  // namespace sable::parquet

#endif
