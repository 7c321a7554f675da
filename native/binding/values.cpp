// Checks over a batch of vectors before it is written (see suspect_rows.h).
#include "env.h"
#include "suspect_rows.h"

namespace sable::binding {

namespace {

// firstSuspectRow(vectors: Float32Array, dim: number, from: number, squaredLimit: number) -> number
Napi::Value first_suspect_row_js(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Float32Array vectors = float32_arg(info, 0, "vectors");
    const size_t dim = uint32_arg(info, 1, "dim");
    const size_t from = uint32_arg(info, 2, "from");
    if (dim == 0 || vectors.ElementLength() % dim != 0) throw sable::Error(Code::invalid_argument, "vectors must hold whole rows of dim values");
    if (!info[3].IsNumber()) throw sable::Error(Code::invalid_argument, "squaredLimit must be a number");
    const float limit = float(info[3].As<Napi::Number>().DoubleValue());
    const int64_t row = first_suspect_row(vectors.Data(), vectors.ElementLength() / dim, dim, from, limit);
    return Napi::Number::New(info.Env(), double(row));
  });
}

}  // namespace

void register_values(Napi::Env env, Napi::Object exports) {
  exports.Set("firstSuspectRow", Napi::Function::New(env, first_suspect_row_js, "firstSuspectRow"));
}

}  // namespace sable::binding
