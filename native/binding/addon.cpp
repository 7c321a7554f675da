// sable.node: the production addon, loaded by engine/native.ts. The kernel test hooks are a
// separate addon (tests/kernels.cpp).
#include "env.h"
#include "../core/memory.h"
#include "kernels/kernels.h"

namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  sable::fix_mmap_threshold();
  sable::binding::init_env(env, exports);
  // The kernel variant in use: Engine.isa, and the receipt of a search that reached no segment.
  exports.Set("activeIsa", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), sable::isa_name(sable::active_kernels().isa));
  }));
  sable::binding::register_vocabulary(env, exports);
  sable::binding::register_segments(env, exports);
  sable::binding::register_model(env, exports);
  sable::binding::register_text(env, exports);
  sable::binding::register_parquet(env, exports);
  sable::binding::register_values(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(sable, init)
