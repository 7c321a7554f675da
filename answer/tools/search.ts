/**
 * The search tool: the question's text against each dataset in scope, dense and keyword fused
 * (hybrid) so exact words count as much as meaning, the caller's filters always added. Results
 * of several datasets merge by reciprocal rank (their scores are not on one scale).
 */
import type { SearchService } from '../../retrieval/search.js';
import type { AdvancedFilter } from '../../engine/index.js';
import { withCallerFilters, type RetrievedChunk, type ToolContext } from './context.js';

/**
 * The answers' weight of the dense side in fusion for a dataset with hybrid off (best of
 * bench:retrieval); a dataset with hybrid on uses its own alpha, which starts at the catalog's
 * DEFAULT_HYBRID_ALPHA (catalog/datasets/record.ts).
 */
export const ANSWER_ALPHA_WITHOUT_HYBRID = 0.7;
const RRF_K = 60;

export interface SearchCall {
  query: string;
  top_k: number;
  /** Planner filters per dataset id (the caller's come from the context). */
  filters: Map<string, AdvancedFilter[]>;
  /** Limit to these datasets (default: all in scope). */
  dataset_ids?: string[];
}

export interface SearchOutcome {
  chunks: RetrievedChunk[];
  /** Per dataset: hits, or what went wrong. */
  perDataset: { dataset_id: string; hits: number; error?: string; filters: AdvancedFilter[] }[];
}

export async function searchTool(search: SearchService, ctx: ToolContext, call: SearchCall): Promise<SearchOutcome> {
  const ids = call.dataset_ids ?? [...ctx.views.keys()];
  const perDataset: SearchOutcome['perDataset'] = [];
  const lists = await Promise.all(
    ids.map(async (id) => {
      const view = ctx.views.get(id)!;
      const planned = call.filters.get(id) ?? [];
      try {
        const r = view.record;
        const out = await search.search(ctx.orgId, r, {
          query_text: call.query,
          top_k: call.top_k,
          hybrid: true,
          alpha: r.hybrid.enabled ? r.hybrid.alpha : ANSWER_ALPHA_WITHOUT_HYBRID,
          include_documents: true,
          ...withCallerFilters(ctx.caller, planned),
        });
        perDataset.push({ dataset_id: id, hits: out.results.length, filters: planned });
        return out.results.map((h): RetrievedChunk => {
          const metadata = { ...(h.metadata ?? {}) };
          delete metadata.text;
          return {
            dataset_id: id,
            id: h.id,
            chunk_id: h.external_id ?? String(h.id),
            score: h.score,
            relevance: relevanceOf(r.metric, h.dense_score ?? null, h.score),
            text: h.doc_value ?? '',
            metadata,
          };
        });
      } catch (e) {
        perDataset.push({ dataset_id: id, hits: 0, error: (e as Error).message, filters: planned });
        return [];
      }
    }),
  );
  return { chunks: mergeByRank(lists, call.top_k), perDataset };
}

/** A similarity for people: cosine similarity where the metric gives one, else the fused score. */
function relevanceOf(metric: string, dense: number | null, fusedScore: number): number {
  const v = metric === 'cosine' && dense !== null ? 1 - dense : 1 - fusedScore;
  return Math.round(Math.min(1, Math.max(0, v)) * 10_000) / 10_000;
}

function mergeByRank(lists: RetrievedChunk[][], k: number): RetrievedChunk[] {
  if (lists.length === 1) return lists[0].slice(0, k);
  const scored = lists.flatMap((l) => l.map((c, rank) => ({ c, rrf: 1 / (RRF_K + rank + 1) })));
  scored.sort((a, b) => b.rrf - a.rrf || b.c.relevance - a.c.relevance);
  return scored.slice(0, k).map((s) => s.c);
}
