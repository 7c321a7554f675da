import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEmbeddingModel, localModelDir } from '../../dist/engine/embedding/local-model.js';
import { WordPieceTokenizer } from '../../dist/engine/embedding/wordpiece.js';
import { native } from '../../dist/engine/native.js';

// Vectors someone else computed with the same model (transformers.js, Xenova/all-MiniLM-L6-v2,
// mean pooling, normalised): 778 documentation chunks and their float32 vectors in order.
const REFERENCE = join(process.cwd(), 'node_modules', '@sap-ux', 'fiori-docs-embeddings', 'data', 'embeddings');

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

describe('word piece tokenizer', () => {
  const path = join(localModelDir(), 'model', 'tokenizer.json');
  const tokenizer = WordPieceTokenizer.fromFile(path);
  const vocab = (JSON.parse(readFileSync(path, 'utf8')) as { model: { vocab: Record<string, number> } }).model.vocab;
  const byId = new Map(Object.entries(vocab).map(([k, v]) => [v, k]));
  const pieces = (text: string) => tokenizer.encode(text).ids.map((id) => byId.get(id));

  it('normalises, splits punctuation and CJK, and finds the longest pieces', () => {
    expect(pieces('Héllo, WORLD!!')).toEqual(['hello', ',', 'world', '!', '!']);
    expect(pieces("don't stop-me 3.14")).toEqual(['don', "'", 't', 'stop', '-', 'me', '3', '.', '14']);
    expect(pieces('日本 ok')).toEqual(['日', '本', 'ok']);
    expect(pieces('unaffable')).toEqual(['una', '##ffa', '##ble']);
    expect(pieces('a\u0000b\tc\u00a0d')).toEqual(['ab', 'c', 'd']);
  });

  it('maps unknown and over-long words to [UNK], and reports where words start', () => {
    expect(pieces('x'.repeat(101))).toEqual(['[UNK]']);
    expect(pieces('ⓧ☃ ok')).toEqual(['[UNK]', 'ok']);
    expect(tokenizer.encode('unaffable words').wordStarts).toEqual([0, 3]);
    expect(tokenizer.encode('').ids).toEqual([]);
  });
});

describe('local embedding model (all-MiniLM-L6-v2)', () => {
  let model: LocalEmbeddingModel;
  beforeAll(() => {
    model = LocalEmbeddingModel.open();
  });
  afterAll(() => model.close());

  it('matches vectors computed elsewhere with the same model (cosine >= 0.999)', async () => {
    const records = readFileSync(join(REFERENCE, 'records.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { content: string });
    const bin = readFileSync(join(REFERENCE, 'embeddings.bin'));
    const reference = new Float32Array(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength));
    expect(reference.length).toBe(records.length * 384);
    // The reference ran without the 256-token window: compare on the chunks that fit in one.
    const fitting = records.map((r, i) => ({ i, n: model.countTokens(r.content) })).filter((r) => r.n <= model.maxTokens - 2);
    expect(fitting.length).toBeGreaterThanOrEqual(40);
    const sample = fitting.filter((_, j) => j % 2 === 0).slice(0, 20);
    const vectors = await model.embed(sample.map((s) => records[s.i].content));
    for (const [j, s] of sample.entries()) {
      const c = cosine(vectors[j], reference.subarray(s.i * 384, (s.i + 1) * 384));
      if (c < 0.999) throw new Error(`record ${s.i} (${s.n} tokens): cosine ${c}`);
    }
  });

  it('computes in bfloat16 where the CPU has AVX512-BF16, within cosine 0.999 of float32 on 100 chunks', async () => {
    const bf16 = native.activeIsa() === 'avx512' && model.precision === 'bf16';
    expect(model.precision).toBe(bf16 ? 'bf16' : 'f32');
    const f32 = LocalEmbeddingModel.open({ precision: 'f32' });
    try {
      expect(f32.precision).toBe('f32');
      if (!bf16) return; // nothing to compare: both are float32 here
      const texts = readFileSync(join(REFERENCE, 'records.jsonl'), 'utf8').trim().split('\n').slice(0, 100).map((l) => (JSON.parse(l) as { content: string }).content);
      const [a, b] = [await model.embed(texts), await f32.embed(texts)];
      for (let i = 0; i < texts.length; i++) {
        const c = cosine(a[i], b[i]);
        if (c < 0.999) throw new Error(`chunk ${i}: cosine ${c} between bfloat16 and float32`);
      }
    } finally {
      f32.close();
    }
    expect(() => LocalEmbeddingModel.open({ precision: 'fp8' as never })).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });

  it('returns unit vectors, the same for the same text whatever the batch', async () => {
    const [a, b, c] = await model.embed(['How do I deploy to Cloud Foundry?', 'Wie spät ist es?', '']);
    const [again] = await model.embed(['How do I deploy to Cloud Foundry?']);
    for (const v of [a, b, c]) expect(cosine(v, v)).toBeCloseTo(1, 5);
    expect(Math.hypot(...a)).toBeCloseTo(1, 5);
    expect(cosine(a, again)).toBeGreaterThan(0.99999);
    expect(cosine(a, b)).toBeLessThan(0.9);
  });

  it('embeds long texts whole: windows between words, nothing after the window dropped', async () => {
    const sentence = 'The deployment artifact for ABAP is a zipped dist folder of the application. ';
    const head = sentence.repeat(30); // about 450 pieces: two windows
    expect(model.countTokens(head)).toBeGreaterThan(model.maxTokens);
    const stats = { texts: 0, windows: 0, tokens: 0 };
    const [x, y] = await model.embed([head + 'Cats sleep on warm keyboards all afternoon.', head + 'Quarterly revenue grew by eleven percent.'], stats);
    expect(stats.windows).toBeGreaterThanOrEqual(4);
    // Different tails, beyond the first window, give different vectors.
    expect(cosine(x, y)).toBeLessThan(0.9999);
    expect(Math.hypot(...x)).toBeCloseTo(1, 5);
  });

  it('refuses bad models and sequences at the native boundary with codes', async () => {
    const config = { vocab: 5, hidden: 4, layers: 1, heads: 2, intermediate: 6, maxPositions: 3, typeVocab: 1, layerNormEps: 1e-12 };
    const t = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i + n));
    const L = 'encoder.layer.0.';
    const tensors: Record<string, Float32Array> = {
      'embeddings.word_embeddings.weight': t(20),
      'embeddings.position_embeddings.weight': t(12),
      'embeddings.token_type_embeddings.weight': t(4),
      'embeddings.LayerNorm.weight': t(4),
      'embeddings.LayerNorm.bias': t(4),
    };
    for (const part of ['query', 'key', 'value']) {
      tensors[`${L}attention.self.${part}.weight`] = t(16);
      tensors[`${L}attention.self.${part}.bias`] = t(4);
    }
    Object.assign(tensors, {
      [`${L}attention.output.dense.weight`]: t(16),
      [`${L}attention.output.dense.bias`]: t(4),
      [`${L}attention.output.LayerNorm.weight`]: t(4),
      [`${L}attention.output.LayerNorm.bias`]: t(4),
      [`${L}intermediate.dense.weight`]: t(24),
      [`${L}intermediate.dense.bias`]: t(6),
      [`${L}output.dense.weight`]: t(24),
      [`${L}output.dense.bias`]: t(4),
      [`${L}output.LayerNorm.weight`]: t(4),
      [`${L}output.LayerNorm.bias`]: t(4),
    });
    const code = (c: string) => expect.objectContaining({ code: c });
    expect(() => native.modelCreate({ ...config, heads: 3 }, tensors)).toThrow(code('model_invalid'));
    const { [`${L}output.dense.bias`]: _dropped, ...missing } = tensors;
    expect(() => native.modelCreate(config, missing)).toThrow(code('model_invalid'));
    expect(() => native.modelCreate(config, { ...tensors, 'embeddings.LayerNorm.bias': t(5) })).toThrow(code('model_invalid'));
    const h = native.modelCreate(config, tensors);
    try {
      const out = await native.modelEmbed(h, Int32Array.of(1, 2, 3, 4), Uint32Array.of(3, 1), 2);
      expect(out.length).toBe(8);
      expect(Math.hypot(...out.subarray(0, 4))).toBeCloseTo(1, 5);
      await expect(native.modelEmbed(h, Int32Array.of(1, 5), Uint32Array.of(2), 1)).rejects.toThrow(code('invalid_argument'));
      await expect(native.modelEmbed(h, Int32Array.of(1, 2, 3, 4), Uint32Array.of(4), 1)).rejects.toThrow(code('invalid_argument'));
      expect(() => native.modelEmbed(h, Int32Array.of(1, 2), Uint32Array.of(3), 1)).toThrow(code('invalid_argument'));
    } finally {
      native.modelRelease(h);
    }
    expect(() => native.modelEmbed(h, Int32Array.of(1), Uint32Array.of(1), 1)).toThrow(code('model_not_found'));
  });
});
