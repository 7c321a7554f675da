// Embedding-model entry points. Models live in one process-wide registry keyed by integer
// handles, like segments, so every worker thread reaches the one copy of the weights.
#include <memory>
#include <mutex>
#include <unordered_map>

#include "env.h"
#include "kernels/kernels.h"
#include "model/bert.h"
#include "priority.h"
#include "task.h"

namespace sable::binding {

namespace {

std::mutex models_mu;
std::unordered_map<uint32_t, std::shared_ptr<const BertEncoder>> models;
uint32_t next_model = 1;

std::shared_ptr<const BertEncoder> model_of(uint32_t h) {
  std::lock_guard lock(models_mu);
  auto it = models.find(h);
  if (it == models.end()) throw sable::Error(Code::model_not_found, "model handle " + std::to_string(h) + " is not open");
  return it->second;
}

size_t size_field(const Napi::Object& o, const char* name) {
  const Napi::Value v = o.Get(name);
  if (!v.IsNumber()) throw sable::Error(Code::invalid_argument, std::string("model config: ") + name + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 1e9) || d != double(size_t(d))) throw sable::Error(Code::invalid_argument, std::string("model config: bad ") + name);
  return size_t(d);
}

// 'auto' (absent) takes bfloat16 where the CPU multiplies it natively, else float32.
Precision precision_of(const Napi::Value& v) {
  const std::string s = v.IsUndefined() || v.IsNull() ? "auto" : v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  if (s == "auto") return active_kernels().gemm_bf16_panels ? Precision::Bf16 : Precision::F32;
  if (s == "f32") return Precision::F32;
  if (s == "bf16") return Precision::Bf16;  // the encoder refuses it where the CPU cannot
  throw sable::Error(Code::invalid_argument, "model config: precision must be auto, f32 or bf16");
}

// modelCreate({vocab, hidden, layers, heads, intermediate, maxPositions, typeVocab, layerNormEps,
// precision?},
// {name: Float32Array}) -> handle. The weights are copied (and packed); the arrays may be dropped.
Napi::Value model_create(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsObject())
      throw sable::Error(Code::invalid_argument, "modelCreate(config, tensors)");
    const Napi::Object cfg = info[0].As<Napi::Object>(), tensors = info[1].As<Napi::Object>();
    BertConfig c;
    c.vocab = size_field(cfg, "vocab");
    c.hidden = size_field(cfg, "hidden");
    c.layers = size_field(cfg, "layers");
    c.heads = size_field(cfg, "heads");
    c.intermediate = size_field(cfg, "intermediate");
    c.max_positions = size_field(cfg, "maxPositions");
    c.type_vocab = size_field(cfg, "typeVocab");
    c.layer_norm_eps = cfg.Get("layerNormEps").As<Napi::Number>().FloatValue();
    c.precision = precision_of(cfg.Get("precision"));
    auto lookup = [&](const std::string& name, size_t count) -> const float* {
      const Napi::Value v = tensors.Get(name);
      if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
        throw sable::Error(Code::model_invalid, "the model has no float tensor " + name);
      const Napi::Float32Array a = v.As<Napi::Float32Array>();
      if (a.ElementLength() != count)
        throw sable::Error(Code::model_invalid, "tensor " + name + " holds " + std::to_string(a.ElementLength()) +
                                                " values, expected " + std::to_string(count));
      return a.Data();
    };
    auto model = std::make_shared<const BertEncoder>(c, lookup);
    std::lock_guard lock(models_mu);
    const uint32_t h = next_model++;
    models.emplace(h, std::move(model));
    return Napi::Number::New(info.Env(), h);
  });
}

// modelPrecision(handle) -> 'f32' | 'bf16': what the model's linear layers compute in.
Napi::Value model_precision(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const auto model = model_of(uint32_arg(info, 0, "handle"));
    return Napi::String::New(info.Env(), model->config().precision == Precision::Bf16 ? "bf16" : "f32");
  });
}

Napi::Value model_release(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const uint32_t h = uint32_arg(info, 0, "handle");
    std::lock_guard lock(models_mu);
    models.erase(h);
    return info.Env().Undefined();
  });
}

// modelEmbed(handle, tokens: Int32Array, lengths: Uint32Array, threads, background?) ->
// Promise<Float32Array> (sequences x hidden), computed off the JS thread: on the libuv pool (a
// query's embedding, which a search waits for), or at background priority (documents).
Napi::Value model_embed(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto model = model_of(uint32_arg(info, 0, "handle"));
    if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
      throw sable::Error(Code::invalid_argument, "tokens must be an Int32Array");
    if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      throw sable::Error(Code::invalid_argument, "lengths must be a Uint32Array");
    const Napi::Int32Array tokens = info[1].As<Napi::Int32Array>();
    const Napi::Uint32Array lengths = info[2].As<Napi::Uint32Array>();
    const unsigned threads = std::max(1u, uint32_arg(info, 3, "threads"));
    size_t total = 0;
    for (size_t i = 0; i < lengths.ElementLength(); ++i) total += lengths[i];
    if (total != tokens.ElementLength()) throw sable::Error(Code::invalid_argument, "the lengths do not add up to the tokens given");
    const size_t count = lengths.ElementLength(), hidden = model->config().hidden;
    auto out = std::make_shared<std::vector<float>>(count * hidden);
    const int32_t* tp = tokens.Data();
    const uint32_t* lp = lengths.Data();
    const bool background = info.Length() > 4 && info[4].ToBoolean().Value();
    return (background ? queue_background : queue)(new Task(
        info.Env(), [model, tp, lp, count, out, threads] { model->embed(tp, lp, count, out->data(), threads); },
        [out](Napi::Env env) -> Napi::Value {
          Napi::Float32Array a = Napi::Float32Array::New(env, out->size());
          std::copy(out->begin(), out->end(), a.Data());
          return a;
        },
        {info[1], info[2]}));
  });
}

}  // namespace

void register_model(Napi::Env env, Napi::Object exports) {
  exports.Set("modelCreate", Napi::Function::New(env, model_create, "modelCreate"));
  exports.Set("modelRelease", Napi::Function::New(env, model_release, "modelRelease"));
  exports.Set("modelPrecision", Napi::Function::New(env, model_precision, "modelPrecision"));
  exports.Set("modelEmbed", Napi::Function::New(env, model_embed, "modelEmbed"));
  // lowerThreadPriority(): the calling thread (a worker thread that does only background work)
  // to background priority, for good.
  exports.Set("lowerThreadPriority", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    sable::lower_this_thread_priority();
    return info.Env().Undefined();
  }, "lowerThreadPriority"));
}

}  // namespace sable::binding
