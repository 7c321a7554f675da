#include "codec_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace sable::parquet {

namespace {

// AddressSanitizer's runtime refuses RTLD_DEEPBIND (a fuzzing build goes without it).
#if defined(__SANITIZE_ADDRESS__)
constexpr int kDeepBind = 0;
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif

}  // namespace

CodecLibrary open_codec_library(const char* env_var, const char* default_name, const char* codec) {
  CodecLibrary lib;
  const char* name = std::getenv(env_var);
  lib.name = name && *name ? name : default_name;
  // DEEPBIND: the library's calls among its own functions stay inside it. Node exports its own
  // (Chromium's) zlib, and libz.so.1's inflate calling Node's crc32 and friends gave wrong
  // results now and then.
  lib.handle = dlopen(lib.name.c_str(), RTLD_NOW | RTLD_LOCAL | kDeepBind);
  if (!lib.handle) {
    const char* e = dlerror();
    lib.why = std::string("codec unavailable: ") + codec + " needs " + lib.name + ", which cannot be opened (" + (e ? e : "unknown") + ")";
  }
  return lib;
}

}  // namespace sable::parquet
