/**
 * Reorders search candidates with a rerank provider, fail-open by default: any provider failure
 * returns the original order with a status saying why, so a reranker outage never fails a search
 * unless the caller asked for fail_open: false.
 *
 * Order when applied: the provider's scored candidates (best first), then any sent candidate the
 * provider left unscored, then the candidates beyond max_documents in their original order; the
 * whole list is then cut to top_n. Appending rather than dropping means top_n > max_documents
 * still returns top_n results, and only the reranked head differs from a plain search.
 */
import { badRequest, SableError } from '../../errors/codes.js';
import { RerankError, type RerankCandidate, type RerankOptions, type RerankProvider, type RerankStatus } from './types.js';

export interface RerankOutcome {
  ordered: RerankCandidate[];
  /** Provider scores by candidate id; only candidates the provider scored have one. */
  rerankScores: Map<number, number>;
  status: RerankStatus;
}

const MAX_MESSAGE = 300;

export async function applyRerank(
  query: string | null,
  candidates: RerankCandidate[],
  opts: RerankOptions,
  providers: ReadonlyMap<string, RerankProvider>,
  signal: AbortSignal = new AbortController().signal,
): Promise<RerankOutcome> {
  const t0 = performance.now();
  const provider = providers.get(opts.provider);
  const model = opts.model || provider?.defaultModel || '';
  const status = (applied: boolean, documents: number, reason?: string, message?: string): RerankStatus => ({
    requested: true,
    applied,
    provider: opts.provider,
    model,
    ...(reason !== undefined ? { reason } : {}),
    ...(message !== undefined ? { message: clip(message) } : {}),
    latency_ms: Math.round((performance.now() - t0) * 1000) / 1000,
    documents,
  });
  const unchanged = (documents: number, reason: string, message?: string): RerankOutcome => ({
    ordered: candidates.slice(0, opts.top_n),
    rerankScores: new Map(),
    status: status(false, documents, reason, message),
  });

  if (!provider) {
    const message = `rerank provider '${opts.provider}' is not configured on this server`;
    if (!opts.fail_open) throw badRequest(message);
    return unchanged(0, 'unknown_provider', message);
  }
  // A raw-vector search has no text to score against; that is not a failure.
  if (query === null || query.trim() === '') return unchanged(0, 'no_query_text');
  const sent = candidates.slice(0, opts.max_documents);
  if (sent.length === 0) return unchanged(0, 'no_documents');

  let results: { index: number; score: number }[];
  try {
    results = await provider.rerank(query, sent.map((c) => c.text ?? ''), Math.min(opts.top_n, sent.length), model, signal);
  } catch (e) {
    const reason = e instanceof RerankError ? e.reason : 'upstream_error';
    const message = e instanceof Error && e.message ? e.message : `${provider.name} rerank failed`;
    if (!opts.fail_open) throw new SableError('upstream_error', clip(`reranker '${provider.name}' failed (${reason}): ${message}`));
    return unchanged(sent.length, reason, message);
  }

  // Providers are outside our control: keep the first score per in-range index, best first.
  const seen = new Set<number>();
  const scored = results
    .filter((r) => Number.isInteger(r.index) && r.index >= 0 && r.index < sent.length && Number.isFinite(r.score) && !seen.has(r.index) && seen.add(r.index))
    .sort((a, b) => b.score - a.score || a.index - b.index);
  const rerankScores = new Map<number, number>();
  const ordered: RerankCandidate[] = [];
  for (const r of scored) {
    ordered.push(sent[r.index]);
    rerankScores.set(sent[r.index].id, r.score);
  }
  sent.forEach((c, i) => seen.has(i) || ordered.push(c));
  for (let i = sent.length; i < candidates.length && ordered.length < opts.top_n; i++) ordered.push(candidates[i]);
  return { ordered: ordered.slice(0, opts.top_n), rerankScores, status: status(true, sent.length) };
}

function clip(s: string): string {
  return s.length > MAX_MESSAGE ? s.slice(0, MAX_MESSAGE) + '…' : s;
}
