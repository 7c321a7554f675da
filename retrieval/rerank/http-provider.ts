/**
 * A reranker reached over HTTP in the Cohere v1 / Jina format: POST {baseUrl}/v1/rerank with
 * {model, query, documents, top_n, return_documents: false}, answered by
 * {results: [{index, relevance_score}]}. Failures are RerankErrors whose messages never contain
 * the API key, even when the provider echoes it back.
 */
import { clip, networkCause, providerMessage, redact } from '../../outbound/messages.js';
import { RerankError, type RerankProvider } from './types.js';

export interface HttpRerankProviderConfig {
  name: 'cohere' | 'jina' | string;
  baseUrl: string;
  /**
   * Read per request so a rotated secret takes effect without a restart. Omitted: no
   * Authorization header (a self-hosted endpoint); given but returning nothing: fails as no_api_key.
   */
  apiKey?: () => string | undefined;
  defaultModel: string;
  timeoutMs: number;
}

export class HttpRerankProvider implements RerankProvider {
  readonly name: string;
  readonly defaultModel: string;
  private readonly url: string;

  constructor(private readonly config: HttpRerankProviderConfig) {
    this.name = config.name;
    this.defaultModel = config.defaultModel;
    this.url = config.baseUrl.replace(/\/+$/, '') + '/v1/rerank';
  }

  async rerank(query: string, documents: string[], topN: number, model: string, signal: AbortSignal): Promise<{ index: number; score: number }[]> {
    const key = this.readKey();
    const timeout = AbortSignal.timeout(this.config.timeoutMs);
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (key) headers.Authorization = `Bearer ${key}`;
    const body = JSON.stringify({ model, query, documents, top_n: Math.min(topN, documents.length), return_documents: false });

    let status: number;
    let text: string;
    try {
      // The body read shares the signal, so a provider that stalls mid-body still times out.
      const res = await fetch(this.url, { method: 'POST', headers, body, signal: AbortSignal.any([signal, timeout]) });
      status = res.status;
      text = await res.text();
    } catch (e) {
      if (timeout.aborted) throw new RerankError('timeout', `${this.name} rerank timed out after ${this.config.timeoutMs} ms`);
      if (signal.aborted) throw new RerankError('aborted', `${this.name} rerank was cancelled`);
      throw new RerankError('unreachable', this.redact(`${this.name} rerank endpoint unreachable: ${networkCause(e)}`, key));
    }

    if (status < 200 || status > 299) {
      // Redacted before providerMessage clips it: a key cut in two would no longer match.
      const detail = providerMessage(this.redact(text, key));
      const msg = this.redact(`${this.name} rerank returned HTTP ${status}${detail ? `: ${detail}` : ''}`, key);
      throw new RerankError(status === 429 ? 'rate_limited' : 'upstream_error', msg, status);
    }
    return this.parse(text, documents.length, key);
  }

  private readKey(): string | undefined {
    if (!this.config.apiKey) return undefined;
    let key: string | undefined;
    try {
      key = this.config.apiKey();
    } catch (e) {
      throw new RerankError('upstream_error', `${this.name} rerank API key could not be read: ${(e as Error)?.message ?? 'unknown error'}`);
    }
    if (!key) throw new RerankError('no_api_key', `${this.name} rerank has no API key configured`);
    return key;
  }

  private parse(text: string, n: number, key: string | undefined): { index: number; score: number }[] {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new RerankError('upstream_error', `${this.name} rerank returned a body that is not JSON`);
    }
    const results = (data as { results?: unknown } | null)?.results;
    if (!Array.isArray(results)) throw new RerankError('upstream_error', `${this.name} rerank response has no results array`);
    const out: { index: number; score: number }[] = [];
    for (const r of results) {
      const index = (r as { index?: unknown } | null)?.index;
      const score = (r as { relevance_score?: unknown } | null)?.relevance_score;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= n || typeof score !== 'number' || !Number.isFinite(score)) {
        throw new RerankError('upstream_error', this.redact(`${this.name} rerank response has an invalid result: ${clip(JSON.stringify(r) ?? String(r))}`, key));
      }
      out.push({ index, score });
    }
    return out.sort((a, b) => b.score - a.score || a.index - b.index);
  }

  private redact(message: string, key: string | undefined): string {
    return redact(message, key);
  }
}
