#include "env.h"

namespace sable::binding {

void init_env(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new EnvData());
  exports.Set("setErrorClass", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    if (!info[0].IsFunction()) throw Napi::TypeError::New(info.Env(), "setErrorClass takes a class");
    info.Env().GetInstanceData<EnvData>()->error_class = Napi::Persistent(info[0].As<Napi::Function>());
    return info.Env().Undefined();
  }));
}

void throw_js(Napi::Env env, Code code, const std::string& message) {
  EnvData* data = env.GetInstanceData<EnvData>();
  Napi::Object err;
  if (data && !data->error_class.IsEmpty()) {
    err = data->error_class.New({Napi::String::New(env, code_name(code)), Napi::String::New(env, message)});
  } else {
    err = Napi::Error::New(env, message).Value();
  }
  err.Set("code", Napi::String::New(env, code_name(code)));
  throw Napi::Error(env, err);
}

Napi::Value guarded(const Napi::CallbackInfo& info, const std::function<Napi::Value()>& body) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const sable::Error& e) {
    throw_js(info.Env(), e.code(), e.what());
  } catch (const std::bad_alloc&) {
    throw_js(info.Env(), Code::out_of_memory, "the engine ran out of memory");
  } catch (const std::exception& e) {
    throw_js(info.Env(), Code::internal, e.what());
  }
}

Napi::Float32Array float32_arg(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
    throw sable::Error(Code::invalid_argument, std::string(name) + " must be a Float32Array");
  return info[i].As<Napi::Float32Array>();
}

uint32_t uint32_arg(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (info.Length() <= i || !info[i].IsNumber()) throw sable::Error(Code::invalid_argument, std::string(name) + " must be a number");
  double v = info[i].As<Napi::Number>().DoubleValue();
  if (!(v >= 0 && v <= 4294967295.0) || v != double(uint32_t(v)))
    throw sable::Error(Code::invalid_argument, std::string(name) + " must be a non-negative integer");
  return uint32_t(v);
}

std::string string_arg(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (info.Length() <= i || !info[i].IsString()) throw sable::Error(Code::invalid_argument, std::string(name) + " must be a string");
  return info[i].As<Napi::String>().Utf8Value();
}

}  // namespace sable::binding
