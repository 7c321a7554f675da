// Kernel entry points for tests and receipts: which ISA runs, which are available, and one
// distance through a chosen variant (to compare every variant with the serial reference).
#include "kernels/kernels.h"

#include "env.h"

namespace sable::binding {

namespace {

Isa parse_isa(const std::string& name) {
  for (Isa isa : {Isa::Serial, Isa::Avx2, Isa::Avx512, Isa::Neon})
    if (name == isa_name(isa)) return isa;
  throw sable::Error("invalid_argument", "unknown ISA '" + name + "'");
}

Napi::Value kernel_distance(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const KernelTable* table = kernels_for(parse_isa(string_arg(info, 0, "isa")));
    if (!table) throw sable::Error("unsupported", "that ISA is not available on this machine");
    std::string kernel = string_arg(info, 1, "kernel");
    Napi::Float32Array a = float32_arg(info, 2, "a");
    size_t d = a.ElementLength();
    float r;
    if (kernel.ends_with("_f32")) {
      Napi::Float32Array b = float32_arg(info, 3, "b");
      if (b.ElementLength() != d) throw sable::Error("invalid_argument", "a and b differ in length");
      auto fn = kernel == "l2sq_f32" ? table->l2sq_f32 : kernel == "ip_f32" ? table->ip_f32 : kernel == "cos_f32" ? table->cos_f32 : nullptr;
      if (!fn) throw sable::Error("invalid_argument", "unknown kernel " + kernel);
      r = fn(a.Data(), b.Data(), d);
    } else {
      if (!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        throw sable::Error("invalid_argument", "code must be a Uint8Array");
      Napi::Uint8Array code = info[3].As<Napi::Uint8Array>();
      Napi::Float32Array vmin = float32_arg(info, 4, "vmin"), scale = float32_arg(info, 5, "scale");
      if (code.ElementLength() != d || vmin.ElementLength() != d || scale.ElementLength() != d)
        throw sable::Error("invalid_argument", "lengths differ");
      auto fn = kernel == "l2sq_sq8" ? table->l2sq_sq8 : kernel == "ip_sq8" ? table->ip_sq8 : kernel == "cos_sq8" ? table->cos_sq8 : nullptr;
      if (!fn) throw sable::Error("invalid_argument", "unknown kernel " + kernel);
      r = fn(a.Data(), code.Data(), vmin.Data(), scale.Data(), d);
    }
    return Napi::Number::New(info.Env(), r);
  });
}

}  // namespace

void register_kernels(Napi::Env env, Napi::Object exports) {
  exports.Set("activeIsa", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), isa_name(active_kernels().isa));
  }));
  exports.Set("availableIsas", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    Napi::Array out = Napi::Array::New(info.Env());
    uint32_t i = 0;
    for (Isa isa : {Isa::Serial, Isa::Avx2, Isa::Avx512, Isa::Neon})
      if (isa_available(isa)) out.Set(i++, Napi::String::New(info.Env(), isa_name(isa)));
    return out;
  }));
  exports.Set("kernelDistance", Napi::Function::New(env, kernel_distance));
}

}  // namespace sable::binding
