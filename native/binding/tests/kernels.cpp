// sable_kernel_tests.node, the kernel test hooks: which variants this machine can run, and one
// distance, one batch of code scores, one assignment tile, one matrix product or one element-wise
// kernel through a chosen variant, to compare every variant with the serial reference
// (test/kernels.test.ts, loaded through engine/native.ts's kernelTestHooks). A separate addon so
// sable.node ships none of this; it links the same sable_core.
#include "kernels/kernels.h"
#include "kernels/half.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "../env.h"
#include "kernels/pack.h"

namespace sable::binding {

namespace {

Isa parse_isa(const std::string& name) {
  for (Isa isa : {Isa::Serial, Isa::Avx2, Isa::Avx512, Isa::Neon})
    if (name == isa_name(isa)) return isa;
  throw sable::Error(Code::invalid_argument, "unknown ISA '" + name + "'");
}

// kernelHalves(isa, values: Float32Array | Uint16Array): floats narrowed to halves (Uint16Array),
// or halves widened to floats (Float32Array), through that variant's conversion.
Napi::Value kernel_halves(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const KernelTable* table = kernels_for(parse_isa(string_arg(info, 0, "isa")));
    if (!table) throw sable::Error(Code::unsupported, "that ISA is not available on this machine");
    if (info.Length() < 2 || !info[1].IsTypedArray()) throw sable::Error(Code::invalid_argument, "values must be a Float32Array or a Uint16Array");
    Napi::TypedArray values = info[1].As<Napi::TypedArray>();
    const size_t n = values.ElementLength();
    if (values.TypedArrayType() == napi_float32_array) {
      Napi::Uint16Array out = Napi::Uint16Array::New(info.Env(), n);
      table->f32_to_f16(values.As<Napi::Float32Array>().Data(), out.Data(), n);
      return out;
    }
    if (values.TypedArrayType() == napi_uint16_array) {
      Napi::Float32Array out = Napi::Float32Array::New(info.Env(), n);
      table->f16_to_f32(values.As<Napi::Uint16Array>().Data(), out.Data(), n);
      return out;
    }
    throw sable::Error(Code::invalid_argument, "values must be a Float32Array or a Uint16Array");
  });
}

Napi::Value kernel_distance(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const KernelTable* table = kernels_for(parse_isa(string_arg(info, 0, "isa")));
    if (!table) throw sable::Error(Code::unsupported, "that ISA is not available on this machine");
    std::string kernel = string_arg(info, 1, "kernel");
    Napi::Float32Array a = float32_arg(info, 2, "a");
    size_t d = a.ElementLength();
    float r;
    if (kernel.ends_with("_f32")) {
      Napi::Float32Array b = float32_arg(info, 3, "b");
      if (b.ElementLength() != d) throw sable::Error(Code::invalid_argument, "a and b differ in length");
      auto fn = kernel == "l2sq_f32" ? table->l2sq_f32 : kernel == "ip_f32" ? table->ip_f32 : kernel == "cos_f32" ? table->cos_f32 : nullptr;
      if (!fn) throw sable::Error(Code::invalid_argument, "unknown kernel " + kernel);
      r = fn(a.Data(), b.Data(), d);
    } else if (kernel.ends_with("_f16")) {
      Napi::Float32Array b = float32_arg(info, 3, "b");
      if (b.ElementLength() != d) throw sable::Error(Code::invalid_argument, "a and b differ in length");
      auto fn = kernel == "l2sq_f16" ? table->l2sq_f16 : kernel == "ip_f16" ? table->ip_f16 : nullptr;
      if (!fn) throw sable::Error(Code::invalid_argument, "unknown kernel " + kernel);
      std::vector<uint16_t> halves(d);
      for (size_t i = 0; i < d; ++i) halves[i] = float_to_half(b.Data()[i]);
      r = fn(a.Data(), halves.data(), d);
    } else {
      if (!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        throw sable::Error(Code::invalid_argument, "code must be a Uint8Array");
      Napi::Uint8Array code = info[3].As<Napi::Uint8Array>();
      Napi::Float32Array vmin = float32_arg(info, 4, "vmin"), scale = float32_arg(info, 5, "scale");
      if (code.ElementLength() != d || vmin.ElementLength() != d || scale.ElementLength() != d)
        throw sable::Error(Code::invalid_argument, "lengths differ");
      auto fn = kernel == "l2sq_sq8" ? table->l2sq_sq8 : kernel == "ip_sq8" ? table->ip_sq8 : kernel == "cos_sq8" ? table->cos_sq8 : nullptr;
      if (!fn) throw sable::Error(Code::invalid_argument, "unknown kernel " + kernel);
      r = fn(a.Data(), code.Data(), vmin.Data(), scale.Data(), d);
    }
    return Napi::Number::New(info.Env(), r);
  });
}

template <class T>
T typed_field(const Napi::Object& o, const char* name, napi_typedarray_type type, const char* what) {
  Napi::Value v = o.Get(name);
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
    throw sable::Error(Code::invalid_argument, std::string(name) + " must be a " + what);
  return v.As<T>();
}

// The batch kernels' optional `sel`: count code indexes below `rows`; without it, the first count.
std::optional<std::vector<uint32_t>> selection(const Napi::Object& o, size_t count, size_t rows) {
  const Napi::Value sel_v = o.Get("sel");
  if (sel_v.IsUndefined() || sel_v.IsNull()) {
    if (count > rows) throw sable::Error(Code::invalid_argument, "count exceeds the codes given");
    return std::nullopt;
  }
  const Napi::Uint32Array sa = typed_field<Napi::Uint32Array>(o, "sel", napi_uint32_array, "Uint32Array");
  if (sa.ElementLength() != count) throw sable::Error(Code::invalid_argument, "sel must hold count entries");
  std::vector<uint32_t> sel(sa.Data(), sa.Data() + count);
  for (uint32_t r : sel)
    if (r >= rows) throw sable::Error(Code::invalid_argument, "sel entry past the last code");
  return sel;
}

// One batched code-scoring kernel through a chosen variant: kernelBatch(isa, kernel,
// { codes, stride, count, sel?, w? | hi?, lo?, s? }) -> Float32Array(count). The weights come
// unpadded (stride entries) and the codes as rows x stride bytes; the padding the kernels' contract
// asks for (weights to a multiple of 64, zero; 64 spare code bytes) is added here.
Napi::Value kernel_batch(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const KernelTable* table = kernels_for(parse_isa(string_arg(info, 0, "isa")));
    if (!table) throw sable::Error(Code::unsupported, "that ISA is not available on this machine");
    const std::string kernel = string_arg(info, 1, "kernel");
    if (kernel != "dot_u8_f32_batch" && kernel != "dot_u8_i8x2_batch")
      throw sable::Error(Code::invalid_argument, "unknown kernel " + kernel);
    if (info.Length() < 3 || !info[2].IsObject()) throw sable::Error(Code::invalid_argument, "arguments must be an object");
    const Napi::Object o = info[2].As<Napi::Object>();
    const Napi::Value stride_v = o.Get("stride"), count_v = o.Get("count");
    if (!stride_v.IsNumber() || !count_v.IsNumber()) throw sable::Error(Code::invalid_argument, "stride and count must be numbers");
    const double stride_d = stride_v.As<Napi::Number>().DoubleValue(), count_d = count_v.As<Napi::Number>().DoubleValue();
    if (!(stride_d >= 1 && stride_d <= 65536 && stride_d == double(size_t(stride_d))) ||
        !(count_d >= 0 && count_d <= 1e6 && count_d == double(size_t(count_d))))
      throw sable::Error(Code::invalid_argument, "stride must be an integer in [1, 65536] and count in [0, 1e6]");
    const size_t stride = size_t(stride_d), count = size_t(count_d);
    const Napi::Uint8Array codes = typed_field<Napi::Uint8Array>(o, "codes", napi_uint8_array, "Uint8Array");
    if (codes.ElementLength() % stride) throw sable::Error(Code::invalid_argument, "codes must hold whole rows");
    const size_t rows = codes.ElementLength() / stride;
    const std::optional<std::vector<uint32_t>> sel = selection(o, count, rows);
    const size_t wide = (stride + 63) / 64 * 64;
    std::vector<uint8_t> padded(codes.ElementLength() + 64, 0);
    std::memcpy(padded.data(), codes.Data(), codes.ElementLength());
    Napi::Float32Array out = Napi::Float32Array::New(info.Env(), count);
    const uint32_t* selp = sel ? sel->data() : nullptr;
    if (kernel == "dot_u8_f32_batch") {
      const Napi::Float32Array w = typed_field<Napi::Float32Array>(o, "w", napi_float32_array, "Float32Array");
      if (w.ElementLength() != stride) throw sable::Error(Code::invalid_argument, "w must hold stride entries");
      std::vector<float> wp(wide, 0.0f);
      std::copy(w.Data(), w.Data() + stride, wp.begin());
      table->dot_u8_f32_batch(wp.data(), padded.data(), stride, selp, count, out.Data());
    } else {
      const Napi::Int8Array hi = typed_field<Napi::Int8Array>(o, "hi", napi_int8_array, "Int8Array");
      const Napi::Int8Array lo = typed_field<Napi::Int8Array>(o, "lo", napi_int8_array, "Int8Array");
      const Napi::Value s_v = o.Get("s");
      if (hi.ElementLength() != stride || lo.ElementLength() != stride || !s_v.IsNumber())
        throw sable::Error(Code::invalid_argument, "hi and lo must hold stride entries, s must be a number");
      std::vector<int8_t> hp(wide, 0), lp(wide, 0);
      std::copy(hi.Data(), hi.Data() + stride, hp.begin());
      std::copy(lo.Data(), lo.Data() + stride, lp.begin());
      table->dot_u8_i8x2_batch(hp.data(), lp.data(), s_v.As<Napi::Number>().FloatValue(), padded.data(), stride, selp,
                               count, out.Data());
    }
    return out;
  });
}

// The bit-code kernel through a chosen variant: kernelBits(isa, { planes, codes, words, count,
// sel? }) -> Uint32Array(count). planes (4 x words) and codes (rows x words) are 64-bit words
// given as Uint32Array pairs, low half first.
Napi::Value kernel_bits(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const KernelTable* table = kernels_for(parse_isa(string_arg(info, 0, "isa")));
    if (!table) throw sable::Error(Code::unsupported, "that ISA is not available on this machine");
    if (info.Length() < 2 || !info[1].IsObject()) throw sable::Error(Code::invalid_argument, "arguments must be an object");
    const Napi::Object o = info[1].As<Napi::Object>();
    const Napi::Value words_v = o.Get("words"), count_v = o.Get("count");
    if (!words_v.IsNumber() || !count_v.IsNumber()) throw sable::Error(Code::invalid_argument, "words and count must be numbers");
    const double words_d = words_v.As<Napi::Number>().DoubleValue(), count_d = count_v.As<Napi::Number>().DoubleValue();
    if (!(words_d >= 1 && words_d <= 1024 && words_d == double(size_t(words_d))) ||
        !(count_d >= 0 && count_d <= 1e6 && count_d == double(size_t(count_d))))
      throw sable::Error(Code::invalid_argument, "words must be an integer in [1, 1024] and count in [0, 1e6]");
    const size_t words = size_t(words_d), count = size_t(count_d);
    auto u64s = [&](const char* name) {
      const Napi::Uint32Array a = typed_field<Napi::Uint32Array>(o, name, napi_uint32_array, "Uint32Array");
      std::vector<uint64_t> v(a.ElementLength() / 2);
      for (size_t i = 0; i < v.size(); ++i) v[i] = uint64_t(a[2 * i]) | (uint64_t(a[2 * i + 1]) << 32);
      return v;
    };
    const std::vector<uint64_t> planes = u64s("planes"), codes = u64s("codes");
    if (planes.size() != 4 * words) throw sable::Error(Code::invalid_argument, "planes must hold 4 x words words");
    if (codes.size() % words) throw sable::Error(Code::invalid_argument, "codes must hold whole rows");
    const size_t rows = codes.size() / words;
    const std::optional<std::vector<uint32_t>> sel = selection(o, count, rows);
    Napi::Uint32Array out = Napi::Uint32Array::New(info.Env(), count);
    table->bits_dot_u4_batch(planes.data(), words, codes.data(), sel ? sel->data() : nullptr, count, out.Data());
    return out;
  });
}

// The k-means assignment tile through a chosen variant: kernelArgmin(isa, points, centroids, dim,
// l2) -> { labels: Uint32Array, keys: Float32Array }, keys min over c of (l2 ? ||c||^2 : 0) - 2 <x, c>.
Napi::Value kernel_argmin(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const KernelTable* table = kernels_for(parse_isa(string_arg(info, 0, "isa")));
    if (!table) throw sable::Error(Code::unsupported, "that ISA is not available on this machine");
    const Napi::Float32Array x = float32_arg(info, 1, "points"), c = float32_arg(info, 2, "centroids");
    const size_t dim = uint32_arg(info, 3, "dim");
    const bool l2 = info.Length() > 4 && info[4].ToBoolean();
    if (dim == 0 || x.ElementLength() % dim || c.ElementLength() % dim || c.ElementLength() == 0)
      throw sable::Error(Code::invalid_argument, "points and centroids must hold whole rows of dim > 0");
    const size_t n = x.ElementLength() / dim, k = c.ElementLength() / dim, W = table->panel_width;
    const size_t npanels = (k + W - 1) / W;
    std::vector<float> panels(npanels * dim * W, 0.0f), pnorm(npanels * W, std::numeric_limits<float>::infinity());
    for (size_t i = 0; i < k; ++i) {
      double nn = 0;
      for (size_t t = 0; t < dim; ++t) {
        panels[(i / W) * dim * W + t * W + i % W] = c.Data()[i * dim + t];
        nn += double(c.Data()[i * dim + t]) * c.Data()[i * dim + t];
      }
      pnorm[i] = l2 ? float(nn) : 0.0f;
    }
    Napi::Uint32Array labels = Napi::Uint32Array::New(info.Env(), n);
    Napi::Float32Array keys = Napi::Float32Array::New(info.Env(), n);
    ArgminPanelsArgs a;
    a.x = x.Data();
    a.dim = dim;
    a.panels = panels.data();
    a.pnorm = pnorm.data();
    a.npanels = npanels;
    a.panels_per_chunk = 2;
    a.labels = labels.Data();
    a.key = keys.Data();
    table->argmin_f32_panels(a, 0, n);
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("labels", labels);
    out.Set("keys", keys);
    return out;
  });
}

// The arguments of kernelGemm and kernelGemmBf16 (a, w, bias | null, k from argument 1 on):
// a (m x k), w (n x k), and the bias zero padded to whole panels of `width`.
struct GemmInputs {
  Napi::Float32Array a, w;
  size_t k, m, n;
  std::vector<float> bias;
};

GemmInputs gemm_inputs(const Napi::CallbackInfo& info, size_t width) {
  GemmInputs in{float32_arg(info, 1, "a"), float32_arg(info, 2, "w"), uint32_arg(info, 4, "k"), 0, 0, {}};
  if (in.k == 0 || in.a.ElementLength() % in.k || in.w.ElementLength() % in.k || in.w.ElementLength() == 0)
    throw sable::Error(Code::invalid_argument, "a and w must hold whole rows of k > 0");
  in.m = in.a.ElementLength() / in.k;
  in.n = in.w.ElementLength() / in.k;
  in.bias.assign((in.n + width - 1) / width * width, 0.0f);
  if (info[3].IsTypedArray()) {
    const Napi::Float32Array b = float32_arg(info, 3, "bias");
    if (b.ElementLength() != in.n) throw sable::Error(Code::invalid_argument, "bias must hold n values");
    std::copy(b.Data(), b.Data() + in.n, in.bias.begin());
  }
  return in;
}

// Tests: kernelGemm(isa, a, w, bias | null, k) -> a (m x k) * w (n x k)^T + bias through one
// variant's gemm_f32_panels.
Napi::Value kernel_gemm(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const KernelTable* table = kernels_for(parse_isa(string_arg(info, 0, "isa")));
    if (!table) throw sable::Error(Code::unsupported, "that ISA is not available on this machine");
    const GemmInputs in = gemm_inputs(info, table->panel_width);
    const size_t m = in.m, n = in.n, k = in.k;
    std::vector<float> panels = pack_panels(in.w.Data(), n, k, table->panel_width);
    Napi::Float32Array c = Napi::Float32Array::New(info.Env(), m * n);
    GemmPanelsArgs g;
    g.a = in.a.Data();
    g.k = k;
    g.panels = panels.data();
    g.bias = in.bias.data();
    g.n = n;
    g.c = c.Data();
    g.ldc = n;
    table->gemm_f32_panels(g, 0, m);
    return c;
  });
}

// Tests: kernelGemmBf16('native' | 'reference', a, w, bias | null, k) -> a (m x k) * w (n x k)^T +
// bias with a and w rounded to bfloat16, through the AVX512-BF16 tile (unsupported where the CPU
// lacks it) or the plain-loop reference, on panels of width 32.
Napi::Value kernel_gemm_bf16(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const std::string variant = string_arg(info, 0, "variant");
    auto fn = variant == "reference" ? gemm_bf16_panels_reference
              : variant == "native"  ? kernels_for(Isa::Avx512) ? kernels_for(Isa::Avx512)->gemm_bf16_panels : nullptr
                                     : throw sable::Error(Code::invalid_argument, "variant must be native or reference");
    if (!fn) throw sable::Error(Code::unsupported, "this CPU has no AVX512-BF16");
    const GemmInputs in = gemm_inputs(info, 32);
    const size_t m = in.m, n = in.n, k = in.k, k2 = (k + 1) / 2;
    std::vector<uint32_t> panels = pack_bf16_panels(in.w.Data(), n, k, 32);
    std::vector<uint16_t> ab(m * 2 * k2, 0);
    for (size_t i = 0; i < m; ++i)
      for (size_t t = 0; t < k; ++t) ab[i * 2 * k2 + t] = bf16_of(in.a.Data()[i * k + t]);
    Napi::Float32Array c = Napi::Float32Array::New(info.Env(), m * n);
    GemmBf16PanelsArgs g;
    g.a = ab.data();
    g.k2 = k2;
    g.panels = panels.data();
    g.bias = in.bias.data();
    g.n = n;
    g.c = c.Data();
    g.ldc = n;
    fn(g, 0, m);
    return c;
  });
}

// Tests: kernelElementwise(isa, 'gelu' | 'softmax', x) -> a copy of x through one variant's
// gelu_f32 or softmax_f32.
Napi::Value kernel_elementwise(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    const KernelTable* table = kernels_for(parse_isa(string_arg(info, 0, "isa")));
    if (!table) throw sable::Error(Code::unsupported, "that ISA is not available on this machine");
    const std::string kernel = string_arg(info, 1, "kernel");
    if (kernel != "gelu" && kernel != "softmax") throw sable::Error(Code::invalid_argument, "kernel must be gelu or softmax");
    const Napi::Float32Array x = float32_arg(info, 2, "x");
    Napi::Float32Array out = Napi::Float32Array::New(info.Env(), x.ElementLength());
    std::copy(x.Data(), x.Data() + x.ElementLength(), out.Data());
    (kernel == "gelu" ? table->gelu_f32 : table->softmax_f32)(out.Data(), out.ElementLength());
    return out;
  });
}

}  // namespace

}  // namespace sable::binding

namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  using namespace sable;
  using namespace sable::binding;
  init_env(env, exports);
  exports.Set("availableIsas", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    Napi::Array out = Napi::Array::New(info.Env());
    uint32_t i = 0;
    for (Isa isa : {Isa::Serial, Isa::Avx2, Isa::Avx512, Isa::Neon})
      if (isa_available(isa)) out.Set(i++, Napi::String::New(info.Env(), isa_name(isa)));
    return out;
  }));
  exports.Set("kernelDistance", Napi::Function::New(env, kernel_distance));
  exports.Set("kernelHalves", Napi::Function::New(env, kernel_halves));
  exports.Set("kernelBatch", Napi::Function::New(env, kernel_batch));
  exports.Set("kernelBits", Napi::Function::New(env, kernel_bits));
  exports.Set("kernelArgmin", Napi::Function::New(env, kernel_argmin));
  exports.Set("kernelGemm", Napi::Function::New(env, kernel_gemm));
  exports.Set("kernelGemmBf16", Napi::Function::New(env, kernel_gemm_bf16));
  exports.Set("kernelElementwise", Napi::Function::New(env, kernel_elementwise));
  return exports;
}

}  // namespace

NODE_API_MODULE(sable_kernel_tests, init)
