// Text entry points: a request's decimal vector read into a Float32Array (see text/decimals.h).
#include "env.h"
#include "text/decimals.h"

namespace sable::binding {

namespace {

// readDecimalList(bytes: Uint8Array, open: number) -> { values: Float32Array, end: number } | null
Napi::Value read_decimal_list_js(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      throw sable::Error(Code::invalid_argument, "bytes must be a Uint8Array");
    Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
    const size_t open = uint32_arg(info, 1, "open");
    thread_local std::vector<float> values;
    size_t end = 0;
    if (!read_decimal_list(reinterpret_cast<const char*>(bytes.Data()), bytes.ElementLength(), open, values, end))
      return info.Env().Null();
    Napi::Float32Array out = Napi::Float32Array::New(info.Env(), values.size());
    std::copy(values.begin(), values.end(), out.Data());
    Napi::Object result = Napi::Object::New(info.Env());
    result.Set("values", out);
    result.Set("end", Napi::Number::New(info.Env(), double(end)));
    return result;
  });
}

}  // namespace

void register_text(Napi::Env env, Napi::Object exports) {
  exports.Set("readDecimalList", Napi::Function::New(env, read_decimal_list_js, "readDecimalList"));
}

}  // namespace sable::binding
