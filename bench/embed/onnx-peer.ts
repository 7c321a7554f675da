/**
 * The embedding benchmark's peer: all-MiniLM-L6-v2 from the same weights and tokenizer as
 * LocalEmbeddingModel, run by ONNX Runtime (CPU) on a graph written by onnx-graph.ts. Texts are
 * cut to the model's 256 tokens (sentence-transformers' behaviour; no windowing, which the
 * benchmark's short sentences never need).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localModelDir } from '../../engine/embedding/local-model.js';
import { readSafetensors } from '../../engine/embedding/safetensors.js';
import { WordPieceTokenizer } from '../../engine/embedding/wordpiece.js';
import { bertOnnxModel } from './onnx-graph.js';
import { loadOnnxRuntime, type Ort, type OrtSession } from './onnx-runtime.js';

const MAX_TOKENS = 256;

export interface OnnxEmbedOptions {
  /** Texts per run() call (default 32). */
  batchSize?: number;
  /** Pad every sequence to this many tokens instead of the batch's longest (a naive baseline). */
  padTo?: number;
}

export class OnnxEmbedder {
  readonly dim: number;

  private constructor(
    private readonly ort: Ort,
    private session: OrtSession | null,
    private readonly tokenizer: WordPieceTokenizer,
    dim: number,
  ) {
    this.dim = dim;
  }

  static async open(opts: { threads: number }): Promise<OnnxEmbedder> {
    const ort = loadOnnxRuntime();
    const dir = localModelDir();
    const cfg = JSON.parse(readFileSync(join(dir, 'model', 'config.json'), 'utf8')) as {
      hidden_size: number;
      num_attention_heads: number;
      layer_norm_eps: number;
    };
    const model = bertOnnxModel(readSafetensors(join(dir, 'model', 'model.fp16.safetensors')), {
      heads: cfg.num_attention_heads,
      eps: cfg.layer_norm_eps,
    });
    const session = await ort.InferenceSession.create(model, {
      intraOpNumThreads: opts.threads,
      // One graph runs at a time: the inter-op pool would only add threads competing for cores.
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    return new OnnxEmbedder(ort, session, WordPieceTokenizer.fromFile(join(dir, 'model', 'tokenizer.json')), cfg.hidden_size);
  }

  /** [CLS] pieces [SEP], at most MAX_TOKENS. */
  tokens(text: string): number[] {
    const ids = this.tokenizer.encode(text).ids.slice(0, MAX_TOKENS - 2);
    return [this.tokenizer.clsId, ...ids, this.tokenizer.sepId];
  }

  /** One L2-normalised vector per text, in input order. */
  async embed(texts: string[], opts: OnnxEmbedOptions = {}): Promise<Float32Array[]> {
    const session = this.session;
    if (!session) throw new Error('OnnxEmbedder is closed');
    const batchSize = opts.batchSize ?? 32;
    const seqs = texts.map((t) => this.tokens(t));
    // Batches of similar lengths waste little on padding.
    const order = seqs.map((_, i) => i).sort((a, b) => seqs[a].length - seqs[b].length);
    const out: Float32Array[] = new Array<Float32Array>(texts.length);
    for (let start = 0; start < order.length; start += batchSize) {
      const idx = order.slice(start, start + batchSize);
      const width = Math.max(opts.padTo ?? 0, ...idx.map((i) => seqs[i].length));
      const ids = new BigInt64Array(idx.length * width);
      const mask = new BigInt64Array(idx.length * width); // padding: id 0 ([PAD]), mask 0
      idx.forEach((i, row) => {
        seqs[i].forEach((id, col) => {
          ids[row * width + col] = BigInt(id);
          mask[row * width + col] = 1n;
        });
      });
      const dims = [idx.length, width];
      const result = await session.run({
        input_ids: new this.ort.Tensor('int64', ids, dims),
        attention_mask: new this.ort.Tensor('int64', mask, dims),
      });
      const emb = result.embedding.data as Float32Array;
      idx.forEach((i, row) => {
        out[i] = emb.slice(row * this.dim, (row + 1) * this.dim);
      });
    }
    return out;
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = null;
    await session?.release();
  }
}
