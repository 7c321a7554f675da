/** What every embedding provider offers, and how its failures are told. */

/** Documents are embedded for storage, queries for search (Cohere embeds them differently). */
export type EmbedKind = 'document' | 'query';

export interface EmbeddingProvider {
  readonly name: string;
  /** Texts per request the provider accepts. */
  readonly maxBatch: number;
  /** One vector per text, in order; `apiKey` undefined when the provider takes none. */
  embed(texts: string[], model: string, kind: EmbedKind, apiKey: string | undefined, signal?: AbortSignal): Promise<Float32Array[]>;
}

export type EmbeddingErrorCode = 'timeout' | 'rate_limited' | 'upstream_error' | 'unreachable' | 'no_api_key' | 'not_configured';

export class EmbeddingError extends Error {
  constructor(
    readonly code: EmbeddingErrorCode,
    message: string,
    readonly status?: number,
    /** The provider's Retry-After header, when it sent one with a 429 or 5xx. */
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}
