#include "bert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "../common.h"
#include "../kernels/kernels.h"
#include "ops.h"

namespace sable {

namespace {

std::vector<float> copy_of(const float* p, size_t n) { return std::vector<float>(p, p + n); }

}  // namespace

BertEncoder::BertEncoder(const BertConfig& c, const TensorLookup& tensor) : config_(c) {
  if (!c.vocab || !c.hidden || !c.layers || !c.heads || !c.intermediate || !c.max_positions || !c.type_vocab ||
      c.hidden % c.heads)
    throw Error(Code::model_invalid, "the model configuration has a zero size or a hidden size not divisible by the heads");
  const size_t h = c.hidden, f = c.intermediate;
  word_ = copy_of(tensor("embeddings.word_embeddings.weight", c.vocab * h), c.vocab * h);
  position_ = copy_of(tensor("embeddings.position_embeddings.weight", c.max_positions * h), c.max_positions * h);
  type0_ = copy_of(tensor("embeddings.token_type_embeddings.weight", c.type_vocab * h), h);
  ln_gamma_ = copy_of(tensor("embeddings.LayerNorm.weight", h), h);
  ln_beta_ = copy_of(tensor("embeddings.LayerNorm.bias", h), h);
  layers_.resize(c.layers);
  for (size_t l = 0; l < c.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    Layer& L = layers_[l];
    // Query, key and value as one product of 3h outputs.
    std::vector<float> w(3 * h * h), b(3 * h);
    const char* parts[] = {"query", "key", "value"};
    for (size_t i = 0; i < 3; ++i) {
      const std::string q = p + "attention.self." + parts[i];
      std::memcpy(w.data() + i * h * h, tensor(q + ".weight", h * h), h * h * sizeof(float));
      std::memcpy(b.data() + i * h, tensor(q + ".bias", h), h * sizeof(float));
    }
    L.qkv = Linear(w.data(), b.data(), h, 3 * h, c.precision);
    L.attn_out = Linear(tensor(p + "attention.output.dense.weight", h * h), tensor(p + "attention.output.dense.bias", h), h, h, c.precision);
    L.ln1_gamma = copy_of(tensor(p + "attention.output.LayerNorm.weight", h), h);
    L.ln1_beta = copy_of(tensor(p + "attention.output.LayerNorm.bias", h), h);
    L.ffn_in = Linear(tensor(p + "intermediate.dense.weight", f * h), tensor(p + "intermediate.dense.bias", f), h, f, c.precision);
    L.ffn_out = Linear(tensor(p + "output.dense.weight", h * f), tensor(p + "output.dense.bias", h), f, h, c.precision);
    L.ln2_gamma = copy_of(tensor(p + "output.LayerNorm.weight", h), h);
    L.ln2_beta = copy_of(tensor(p + "output.LayerNorm.bias", h), h);
  }
}

size_t BertEncoder::memory_bytes() const {
  size_t bytes = (word_.capacity() + position_.capacity() + type0_.capacity() + 2 * config_.hidden) * sizeof(float);
  for (const Layer& L : layers_)
    bytes += L.qkv.memory_bytes() + L.attn_out.memory_bytes() + L.ffn_in.memory_bytes() + L.ffn_out.memory_bytes() +
             4 * config_.hidden * sizeof(float);
  return bytes;
}

void BertEncoder::embed(const int32_t* tokens, const uint32_t* lengths, size_t count, float* out,
                        unsigned threads) const {
  std::vector<size_t> offsets(count + 1, 0);
  for (size_t i = 0; i < count; ++i) {
    if (lengths[i] == 0 || lengths[i] > config_.max_positions)
      throw Error(Code::invalid_argument, "a sequence must hold 1 to " + std::to_string(config_.max_positions) + " tokens");
    offsets[i + 1] = offsets[i] + lengths[i];
  }
  for (size_t t = 0; t < offsets[count]; ++t)
    if (tokens[t] < 0 || size_t(tokens[t]) >= config_.vocab) throw Error(Code::invalid_argument, "a token id is outside the vocabulary");
  if (count == 0) return;
  // Contiguous groups of about equal token counts, one per thread.
  threads = std::max(1u, std::min<unsigned>(threads, unsigned(count)));
  std::vector<size_t> bounds{0};
  for (unsigned g = 1; g < threads; ++g) {
    const size_t target = offsets[count] * g / threads;
    size_t i = size_t(std::lower_bound(offsets.begin(), offsets.end(), target) - offsets.begin());
    i = std::clamp(i, bounds.back() + 1, count);
    if (i < count) bounds.push_back(i);
  }
  bounds.push_back(count);
  std::vector<std::thread> pool;
  for (size_t g = 1; g + 1 < bounds.size(); ++g)
    pool.emplace_back([&, g] { forward_in_passes(tokens, lengths, offsets.data(), bounds[g], bounds[g + 1], out); });
  forward_in_passes(tokens, lengths, offsets.data(), bounds[0], bounds[1], out);
  for (auto& t : pool) t.join();
}

// A pass holds about 15 KB of activations per token (hidden, QKV, context, residual and the FFN's
// intermediate rows): 128 chunks of 254 tokens in one pass held half a gigabyte. Passes of 2048
// tokens keep the matrix products as efficient and the memory near 30 MB per thread.
constexpr size_t kRowsPerPass = 2048;

void BertEncoder::forward_in_passes(const int32_t* tokens, const uint32_t* lengths, const size_t* offsets,
                                    size_t first, size_t last, float* out) const {
  for (size_t s = first; s < last;) {
    size_t e = s + 1;
    while (e < last && offsets[e + 1] - offsets[s] <= kRowsPerPass) ++e;
    forward(tokens, lengths, offsets, s, e, out);
    s = e;
  }
}

void BertEncoder::attention(const float* qkv, size_t n, float* ctx, AttentionScratch& a) const {
  const size_t h = config_.hidden, dh = h / config_.heads;
  const KernelTable& kt = active_kernels();
  const size_t W = kt.panel_width;
  const size_t key_panels = (n + W - 1) / W, dim_panels = (dh + W - 1) / W;
  const float scale = 1.0f / std::sqrt(float(dh));
  a.q.resize(n * dh);
  a.keys.assign(key_panels * dh * W, 0.0f);
  a.values.assign(dim_panels * n * W, 0.0f);
  a.scores.resize(n * n);
  a.zeros.assign(std::max(key_panels, dim_panels) * W, 0.0f);
  for (size_t head = 0; head < config_.heads; ++head) {
    const size_t off = head * dh;
    // Scores = (scale Q) K^T and context = P V through the matrix-product tile: K packed as the
    // B operand (keys are its rows), V as the B operand of P V (its columns are the rows of V^T).
    for (size_t i = 0; i < n; ++i) {
      const float* row = qkv + i * 3 * h;
      for (size_t d = 0; d < dh; ++d) {
        a.q[i * dh + d] = row[off + d] * scale;
        a.keys[(i / W) * dh * W + d * W + i % W] = row[h + off + d];
        a.values[(d / W) * n * W + i * W + d % W] = row[2 * h + off + d];
      }
    }
    GemmPanelsArgs g;
    g.a = a.q.data();
    g.k = dh;
    g.panels = a.keys.data();
    g.bias = a.zeros.data();
    g.n = n;
    g.c = a.scores.data();
    g.ldc = n;
    kt.gemm_f32_panels(g, 0, n);
    for (size_t i = 0; i < n; ++i) kt.softmax_f32(a.scores.data() + i * n, n);
    g.a = a.scores.data();
    g.k = n;
    g.panels = a.values.data();
    g.n = dh;
    g.c = ctx + off;
    g.ldc = h;
    kt.gemm_f32_panels(g, 0, n);
  }
}

void BertEncoder::forward(const int32_t* tokens, const uint32_t* lengths, const size_t* offsets, size_t first,
                          size_t last, float* out) const {
  const size_t h = config_.hidden, f = config_.intermediate;
  const size_t base = offsets[first], rows = offsets[last] - base;
  std::vector<float> x(rows * h), qkv(rows * 3 * h), ctx(rows * h), tmp(rows * h), inter(rows * f);
  AttentionScratch scratch;
  for (size_t s = first; s < last; ++s)
    for (size_t i = 0; i < lengths[s]; ++i) {
      const size_t r = offsets[s] - base + i;
      const float* w = word_.data() + size_t(tokens[offsets[s] + i]) * h;
      const float* p = position_.data() + i * h;
      for (size_t d = 0; d < h; ++d) x[r * h + d] = w[d] + p[d] + type0_[d];
    }
  layer_norm_rows(x.data(), rows, h, ln_gamma_.data(), ln_beta_.data(), config_.layer_norm_eps);
  for (const Layer& L : layers_) {
    L.qkv.apply(x.data(), rows, qkv.data(), 3 * h);
    for (size_t s = first; s < last; ++s)
      attention(qkv.data() + (offsets[s] - base) * 3 * h, lengths[s], ctx.data() + (offsets[s] - base) * h, scratch);
    L.attn_out.apply(ctx.data(), rows, tmp.data(), h);
    for (size_t i = 0; i < rows * h; ++i) x[i] += tmp[i];
    layer_norm_rows(x.data(), rows, h, L.ln1_gamma.data(), L.ln1_beta.data(), config_.layer_norm_eps);
    L.ffn_in.apply(x.data(), rows, inter.data(), f);
    gelu(inter.data(), rows * f);
    L.ffn_out.apply(inter.data(), rows, tmp.data(), h);
    for (size_t i = 0; i < rows * h; ++i) x[i] += tmp[i];
    layer_norm_rows(x.data(), rows, h, L.ln2_gamma.data(), L.ln2_beta.data(), config_.layer_norm_eps);
  }
  for (size_t s = first; s < last; ++s) {
    float* o = out + s * h;
    std::fill(o, o + h, 0.0f);
    const size_t r0 = offsets[s] - base;
    for (size_t i = 0; i < lengths[s]; ++i)
      for (size_t d = 0; d < h; ++d) o[d] += x[(r0 + i) * h + d];
    const float inv = 1.0f / float(lengths[s]);
    for (size_t d = 0; d < h; ++d) o[d] *= inv;
    normalize_l2(o, h);
  }
}

}  // namespace sable
