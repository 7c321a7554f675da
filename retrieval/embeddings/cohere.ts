/**
 * Cohere's embed API v2: POST {baseUrl}/v2/embed with {model, texts, input_type, embedding_types:
 * ['float']}, answered by {embeddings: {float: [[...]]}}. Documents are embedded as
 * `search_document`, queries as `search_query`, as Cohere's v3 models expect.
 */
import { toVector } from './openai.js';
import { OutboundError, postJson, type RetryPolicy } from '../../outbound/post-json.js';
import type { EmbedKind, EmbeddingProvider } from './types.js';

export class CohereEmbeddingProvider implements EmbeddingProvider {
  readonly name = 'cohere';
  readonly maxBatch = 96;
  private readonly url: string;

  constructor(baseUrl: string, private readonly policy: RetryPolicy) {
    this.url = baseUrl.replace(/\/+$/, '') + '/v2/embed';
  }

  async embed(texts: string[], model: string, kind: EmbedKind, apiKey: string | undefined, signal?: AbortSignal): Promise<Float32Array[]> {
    const body = { model, texts, input_type: kind === 'query' ? 'search_query' : 'search_document', embedding_types: ['float'] };
    const data = (await postJson(`${this.name} embeddings`, this.url, body, apiKey, this.policy, {}, signal)) as { embeddings?: { float?: unknown[] } };
    const vectors = data?.embeddings?.float;
    if (!Array.isArray(vectors) || vectors.length !== texts.length) {
      throw new OutboundError('upstream_error', `cohere embeddings returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${texts.length} texts`);
    }
    return vectors.map((v) => toVector(this.name, v));
  }
}
