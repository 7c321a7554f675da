// The core's vocabulary as names: every error code it can raise and every value of its
// enumerations. The engine checks its TypeScript definitions against these at load.
#include "env.h"
#include "columns/column.h"

namespace sable::binding {

namespace {

template <class T, size_t N>
Napi::Array names(Napi::Env env, const T (&values)[N], const char* (*name)(T)) {
  Napi::Array out = Napi::Array::New(env, N);
  for (size_t i = 0; i < N; ++i) out.Set(uint32_t(i), name(values[i]));
  return out;
}

constexpr Code kCodes[] = {
#define SABLE_CODE_VALUE(name) Code::name,
    SABLE_ERROR_CODES(SABLE_CODE_VALUE)
#undef SABLE_CODE_VALUE
};

}  // namespace

void register_vocabulary(Napi::Env env, Napi::Object exports) {
  exports.Set("errorCodes", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
    return names(info.Env(), kCodes, code_name);
  }));
  exports.Set("enumerations", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("metrics", names(env, kMetrics, metric_name));
    o.Set("indexTypes", names(env, kIndexTypes, index_type_name));
    o.Set("columnTypes", names(env, kColumnTypes, column_type_name));
    o.Set("predicateOps", names(env, kPredicateOps, predicate_op_name));
    return o;
  }));
}

}  // namespace sable::binding
