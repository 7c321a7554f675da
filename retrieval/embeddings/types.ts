/**
 * What every embedding provider offers. Providers fail with OutboundError (the service failed)
 * or SableError invalid_request (the request cannot be served: a model the provider lacks).
 */

/** Documents are embedded for storage, queries for search (Cohere embeds them differently). */
export type EmbedKind = 'document' | 'query';

export interface EmbeddingProvider {
  readonly name: string;
  /** Texts per request the provider accepts. */
  readonly maxBatch: number;
  /** One vector per text, in order; `apiKey` undefined when the provider takes none. */
  embed(texts: string[], model: string, kind: EmbedKind, apiKey: string | undefined, signal?: AbortSignal): Promise<Float32Array[]>;
}
