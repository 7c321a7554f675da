// Per-environment addon state (one per main thread or worker thread) and the error bridge:
// every entry point catches at the edge and throws the JS error class the engine handed in.
#pragma once
#include <napi.h>

#include <functional>

#include "common.h"

namespace sable::binding {

struct EnvData {
  Napi::FunctionReference error_class;
};

// An addon's first step on a new environment (sable.node, and the kernel test hooks' addon): its
// EnvData, and setErrorClass(cls) to hand in the error class.
void init_env(Napi::Env env, Napi::Object exports);

// Throws a JS error with a string `code` (the injected class, constructed as (code, message),
// when set, else Error).
[[noreturn]] void throw_js(Napi::Env env, Code code, const std::string& message);

// Runs `body`, turning sable::Error and std::exception into JS errors with codes.
Napi::Value guarded(const Napi::CallbackInfo& info, const std::function<Napi::Value()>& body);

// Argument readers that check what protects memory; the TypeScript layer gives the friendly
// messages before it calls in.
Napi::Float32Array float32_arg(const Napi::CallbackInfo& info, size_t i, const char* name);
uint32_t uint32_arg(const Napi::CallbackInfo& info, size_t i, const char* name);
std::string string_arg(const Napi::CallbackInfo& info, size_t i, const char* name);

// errorCodes() and enumerations(): the core's names, for the TypeScript registry and vocabulary.
void register_vocabulary(Napi::Env env, Napi::Object exports);
void register_segments(Napi::Env env, Napi::Object exports);
void register_model(Napi::Env env, Napi::Object exports);
void register_text(Napi::Env env, Napi::Object exports);
void register_parquet(Napi::Env env, Napi::Object exports);
void register_values(Napi::Env env, Napi::Object exports);

}  // namespace sable::binding
