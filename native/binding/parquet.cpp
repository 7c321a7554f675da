// Parquet entry point: one column chunk's bytes decoded by the core (core/parquet/), the
// buffers handed to JS as external ArrayBuffers (no copy), freed when JS lets them go.
#include "env.h"
#include "parquet/column_chunk.h"

#include <cmath>
#include <cstdlib>

namespace sable::binding {

namespace {

using sable::parquet::ChunkSpec;
using sable::parquet::OwnedBytes;
using sable::parquet::Physical;

double number_field(const Napi::Object& o, const char* name, double lo, double hi) {
  Napi::Value v = o.Get(name);
  if (!v.IsNumber()) throw sable::Error(Code::invalid_argument, std::string("spec.") + name + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= lo && d <= hi) || d != std::floor(d)) {
    throw sable::Error(Code::invalid_argument, std::string("spec.") + name + " must be an integer from " + std::to_string(int64_t(lo)) + " to " + std::to_string(int64_t(hi)));
  }
  return d;
}

// The buffer moved into an ArrayBuffer V8 counts as external memory, so a loop of decodes
// collects the previous ones' buffers as it would its own.
Napi::ArrayBuffer hand_over(Napi::Env env, OwnedBytes& b) {
  const size_t n = b.size();
  if (n == 0 || !b.data()) return Napi::ArrayBuffer::New(env, 0);
  const OwnedBytes::Released r = b.release();
  Napi::MemoryManagement::AdjustExternalMemory(env, int64_t(n));
  return Napi::ArrayBuffer::New(env, r.data, n, [r, n](Napi::Env e, void*) {
    OwnedBytes::free_released(r);
    Napi::MemoryManagement::AdjustExternalMemory(e, -int64_t(n));
  });
}

// parquetDecodeChunk(chunk: Uint8Array, spec) -> { levels, count, values, offsets, defLevels, repLevels }
Napi::Value decode_chunk_js(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      throw sable::Error(Code::invalid_argument, "chunk must be a Uint8Array");
    if (!info[1].IsObject()) throw sable::Error(Code::invalid_argument, "spec must be an object");
    Napi::Uint8Array chunk = info[0].As<Napi::Uint8Array>();
    Napi::Object o = info[1].As<Napi::Object>();
    constexpr double kMaxSafe = 9007199254740991.0;
    ChunkSpec spec;
    spec.physical = int32_t(number_field(o, "physicalType", 0, 7));
    spec.codec = int32_t(number_field(o, "codec", 0, 1000));
    spec.max_def = int32_t(number_field(o, "maxDefinitionLevel", 0, 255));
    spec.max_rep = int32_t(number_field(o, "maxRepetitionLevel", 0, 255));
    spec.num_values = int64_t(number_field(o, "numValues", 0, kMaxSafe));
    spec.uncompressed_size = int64_t(number_field(o, "uncompressedSize", 0, kMaxSafe));
    spec.type_length = int32_t(number_field(o, "typeLength", 0, 2147483647.0));
    spec.limit_bytes = uint64_t(number_field(o, "limitBytes", 0, kMaxSafe));
    sable::parquet::DecodedChunk d = sable::parquet::decode_column_chunk(chunk.Data(), chunk.ByteLength(), spec);

    Napi::Object out = Napi::Object::New(env);
    out.Set("levels", Napi::Number::New(env, double(d.levels)));
    out.Set("count", Napi::Number::New(env, double(d.values)));
    out.Set("records", Napi::Number::New(env, double(d.records)));
    out.Set("recordLength", Napi::Number::New(env, double(d.record_length)));
    out.Set("firstNonFinite", Napi::Number::New(env, double(d.first_non_finite)));
    const size_t count = size_t(d.values);
    Napi::ArrayBuffer data = hand_over(env, d.data);
    switch (Physical(spec.physical)) {
      case Physical::float32: out.Set("values", Napi::Float32Array::New(env, count, data, 0)); break;
      case Physical::float64: out.Set("values", Napi::Float64Array::New(env, count, data, 0)); break;
      case Physical::int32: out.Set("values", Napi::Int32Array::New(env, count, data, 0)); break;
      case Physical::int64: out.Set("values", Napi::BigInt64Array::New(env, count, data, 0)); break;
      default: out.Set("values", Napi::Uint8Array::New(env, data.ByteLength(), data, 0)); break;
    }
    if (Physical(spec.physical) == Physical::byte_array) {
      Napi::ArrayBuffer offs = hand_over(env, d.offsets);
      out.Set("offsets", Napi::Int32Array::New(env, offs.ByteLength() / 4, offs, 0));
    } else {
      out.Set("offsets", env.Null());
    }
    if (spec.max_def > 0) {
      Napi::ArrayBuffer b = hand_over(env, d.def);
      out.Set("defLevels", Napi::Uint8Array::New(env, b.ByteLength(), b, 0));
    } else {
      out.Set("defLevels", env.Null());
    }
    if (spec.max_rep > 0) {
      Napi::ArrayBuffer b = hand_over(env, d.rep);
      out.Set("repLevels", Napi::Uint8Array::New(env, b.ByteLength(), b, 0));
    } else {
      out.Set("repLevels", env.Null());
    }
    return out;
  });
}

}  // namespace

void register_parquet(Napi::Env env, Napi::Object exports) {
  exports.Set("parquetDecodeChunk", Napi::Function::New(env, decode_chunk_js, "parquetDecodeChunk"));
}

}  // namespace sable::binding
