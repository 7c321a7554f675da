// A BERT encoder (the architecture of all-MiniLM-L6-v2) for sentence embeddings: token, position
// and segment embeddings, post-norm transformer layers with exact GELU, then the mean of the last
// hidden states over the sequence, L2-normalised. Sequences are never padded: each thread packs
// its sequences back to back, so the linear layers see one tall matrix and attention runs per
// sequence.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "linear.h"

namespace sable {

struct BertConfig {
  size_t vocab = 0, hidden = 0, layers = 0, heads = 0, intermediate = 0, max_positions = 0, type_vocab = 0;
  float layer_norm_eps = 1e-12f;
  Precision precision = Precision::F32;  // of the linear layers; attention is float32 always
};

// Looks up a weight tensor by its Hugging Face name; returns its `count` floats, or throws
// Error(Code::model_invalid) when it is missing or has another size.
using TensorLookup = std::function<const float*(const std::string& name, size_t count)>;

class BertEncoder {
 public:
  BertEncoder(const BertConfig& config, const TensorLookup& tensor);

  const BertConfig& config() const { return config_; }
  size_t memory_bytes() const;

  // Embeds `count` sequences of token ids (each already framed by [CLS] ... [SEP]) stored back to
  // back in `tokens`, lengths[i] ids each (1..max_positions), into out (count x hidden), on up to
  // `threads` threads. Throws Error(Code::invalid_argument) for out-of-range ids or lengths.
  void embed(const int32_t* tokens, const uint32_t* lengths, size_t count, float* out, unsigned threads) const;

 private:
  struct Layer {
    Linear qkv, attn_out, ffn_in, ffn_out;
    std::vector<float> ln1_gamma, ln1_beta, ln2_gamma, ln2_beta;
  };
  // Buffers of attention, reused across sequences and layers of one forward pass.
  struct AttentionScratch {
    std::vector<float> q, keys, values, scores, zeros;
  };
  // Multi-head self-attention of one sequence: qkv holds n rows of [Q | K | V] (3 * hidden
  // values each), ctx receives n rows of hidden values.
  void attention(const float* qkv, size_t n, float* ctx, AttentionScratch& scratch) const;
  // Sequences [first, last) on the calling thread, in passes of at most kRowsPerPass tokens.
  void forward_in_passes(const int32_t* tokens, const uint32_t* lengths, const size_t* offsets, size_t first,
                         size_t last, float* out) const;
  // The forward pass of sequences [first, last) on the calling thread.
  void forward(const int32_t* tokens, const uint32_t* lengths, const size_t* offsets, size_t first, size_t last,
               float* out) const;

  BertConfig config_;
  std::vector<float> word_, position_, type0_, ln_gamma_, ln_beta_;
  std::vector<Layer> layers_;
};

}  // namespace sable
