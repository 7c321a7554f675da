// A codec's system library (libzstd.so.1, libz.so.1) opened at first use with dlopen, so the core
// builds and runs without it; a file in that codec is then refused and read by parquet-wasm.
#pragma once
#include <string>

namespace sable::parquet {

struct CodecLibrary {
  void* handle = nullptr;  // never closed: its functions stay in use for the life of the process
  std::string name;        // the file opened: `env_var`'s value, else the default
  std::string why;         // set when it cannot be opened
};

// `codec` names the codec in the refusal ("ZSTD").
CodecLibrary open_codec_library(const char* env_var, const char* default_name, const char* codec);

}  // namespace sable::parquet
