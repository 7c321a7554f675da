/** Shapes shared by the model-reranker layer: options, providers, and the status a search reports. */

/** One search hit as the reranker sees it; `score` is the engine's distance and is never replaced. */
export interface RerankCandidate {
  id: number;
  text: string | null;
  score: number;
}

export interface RerankOptions {
  enabled: boolean;
  provider: string;
  /** '' means the provider's default, resolved when the provider is looked up. */
  model: string;
  top_n: number;
  max_documents: number;
  fail_open: boolean;
}

/** Reported on a search response whenever rerank was requested, applied or not. */
export interface RerankStatus {
  requested: true;
  applied: boolean;
  provider: string;
  model: string;
  /** Why rerank was not applied: a RerankReason, or no_query_text, no_documents, unknown_provider. */
  reason?: string;
  /** A short human-readable detail for `reason`; never carries a credential. */
  message?: string;
  latency_ms: number;
  /** Documents sent to the provider (0 when it was not called). */
  documents: number;
}

export interface RerankProvider {
  readonly name: string;
  readonly defaultModel: string;
  /** When set, the only models this provider accepts (the option parser rejects others). */
  readonly models?: readonly string[];
  /** Scores for (a subset of) `documents` by position, best first. */
  rerank(query: string, documents: string[], topN: number, model: string, signal: AbortSignal): Promise<{ index: number; score: number }[]>;
}

export type RerankReason = 'timeout' | 'rate_limited' | 'upstream_error' | 'unreachable' | 'aborted' | 'no_api_key';

/** A provider failure classified for the fail-open status; messages must not contain secrets. */
export class RerankError extends Error {
  constructor(
    readonly reason: RerankReason,
    message: string,
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}
