/**
 * The OpenAI embeddings API, POST {baseUrl}/embeddings with {model, input, encoding_format:
 * 'float'}, answered by {data: [{index, embedding}]}. The same format serves `openai`,
 * `openai-compatible` servers (Ollama, vLLM, Text Embeddings Inference, llama.cpp) and the
 * contract's `managed` models on the inference server a deployment configures.
 */
import { OutboundError, postJson, type RetryPolicy } from '../../outbound/post-json.js';
import type { EmbeddingProvider } from './types.js';

export class OpenAiEmbeddingProvider implements EmbeddingProvider {
  readonly maxBatch = 256;
  private readonly url: string;

  constructor(
    readonly name: string,
    baseUrl: string,
    private readonly policy: RetryPolicy,
  ) {
    this.url = baseUrl.replace(/\/+$/, '') + '/embeddings';
  }

  async embed(texts: string[], model: string, _kind: unknown, apiKey: string | undefined, signal?: AbortSignal): Promise<Float32Array[]> {
    const data = (await postJson(`${this.name} embeddings`, this.url, { model, input: texts, encoding_format: 'float' }, apiKey, this.policy, {}, signal)) as {
      data?: { index?: unknown; embedding?: unknown }[];
    };
    if (!Array.isArray(data?.data) || data.data.length !== texts.length) {
      throw new OutboundError('upstream_error', `${this.name} embeddings returned ${Array.isArray(data?.data) ? data.data.length : 'no'} vectors for ${texts.length} texts`);
    }
    const out: Float32Array[] = new Array(texts.length);
    data.data.forEach((d, i) => {
      const index = typeof d.index === 'number' ? d.index : i;
      if (!Number.isInteger(index) || index < 0 || index >= texts.length || out[index]) {
        throw new OutboundError('upstream_error', `${this.name} embeddings returned a bad index ${String(d.index)}`);
      }
      out[index] = toVector(this.name, d.embedding);
    });
    return out;
  }
}

export function toVector(provider: string, v: unknown): Float32Array {
  if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw new OutboundError('upstream_error', `${provider} embeddings returned a vector that is not a list of finite numbers`);
  }
  return Float32Array.from(v as number[]);
}
