/**
 * The search use-case: a search request (retrieval/requests.ts) against one dataset, whoever
 * asks (the HTTP route, an answer planner, a scheduler). Text is embedded with the dataset's
 * model (or the request's override), the engine search runs on the worker pool (dense, or fused
 * with keywords when hybrid), the model reranker reorders when asked, and hits are shaped as the
 * contract's results: string ids, metadata without storage pointers, documents on request.
 */
import type { DatasetRecord } from '../catalog/datasets/record.js';
import type { DatasetService } from '../catalog/datasets/service.js';
import { badRequest } from '../errors/codes.js';
import { DEFAULT_TOP_K, type Hit, type Receipt, type ShardRunner } from '../engine/index.js';
import type { Embedder, EmbeddingTarget } from './embeddings/embedder.js';
import { parseRerankOption } from './rerank/options.js';
import type { RerankProviders } from './rerank/providers.js';
import { applyRerank } from './rerank/rerank.js';
import type { RerankStatus } from './rerank/types.js';
import type { Scalar } from '../contract/json-schema.js';
import type { SearchRequest } from './requests.js';
import { visibleMetadata } from './vectors.js';
import type { ShardedVectors, ShardHit } from './sharded.js';

export interface SearchResult {
  id: number;
  score: number;
  external_id?: string;
  metadata?: Record<string, Scalar>;
  /** With include_embeddings: the stored vector (the HTTP layer encodes it). */
  embedding?: Float32Array;
  doc_kind: 'inline' | null;
  doc_value?: string | null;
  dense_score?: number | null;
  keyword_score?: number;
  dense_contribution?: number;
  keyword_contribution?: number;
  rerank_score?: number | null;
}

export interface SearchOutcome {
  results: SearchResult[];
  receipt: Receipt | null;
  rerank?: RerankStatus;
  /** Milliseconds from the start of the use-case to the shaped results. */
  query_time_ms: number;
}

type FusedFields = { dense_score: number | null; keyword_score: number; dense_contribution: number; keyword_contribution: number };

export class SearchService {
  constructor(
    private readonly datasets: DatasetService,
    private readonly runner: ShardRunner,
    private readonly embedder: Embedder,
    private readonly rerank: RerankProviders,
    /** Cluster mode: the dataset's shard replicas, instead of this process's engine. */
    private readonly sharded?: ShardedVectors,
  ) {}

  async search(orgId: string, r: DatasetRecord, b: SearchRequest): Promise<SearchOutcome> {
    const t0 = process.hrtime.bigint();
    const ds = this.sharded ? undefined : this.datasets.engineOf(r);
    if (b.query !== undefined && b.query_text !== undefined) throw badRequest('send either query or query_text, not both');
    if (b.query_text !== undefined && b.query_text.trim() === '') throw badRequest('query_text is empty');
    if (b.query_text === undefined && (b.embedding_model !== undefined || b.embedding_provider !== undefined)) {
      throw badRequest('embedding_model and embedding_provider apply to query_text only');
    }
    // Hybrid per query, else the dataset's setting; it needs keyword text to search with.
    const keywordText = b.sparse_query ?? b.query_text;
    const hybrid = b.hybrid ?? (r.hybrid.enabled && keywordText !== undefined);
    if (hybrid && (keywordText === undefined || keywordText.trim() === '')) throw badRequest('hybrid search needs keyword text: send sparse_query');
    if (!b.query && b.query_text === undefined && !hybrid) throw badRequest('query (a vector) or query_text is required');
    const topK = b.top_k ?? DEFAULT_TOP_K;
    // Providers are made per organization (their keys are its secrets): only when asked for.
    const providers = b.rerank === undefined || b.rerank === false ? undefined : this.rerank.providersFor(orgId);
    const rr = providers ? parseRerankOption(b.rerank, topK, { provider: this.rerank.defaultProvider, providers }) : null;
    const includeMetadata = b.include_metadata ?? true;
    const includeDocuments = b.include_documents === true;
    const searchOptions = {
      topK: rr ? Math.max(topK, rr.top_n) : topK,
      nprobe: b.nprobe_override,
      rerankDepth: b.rerank_depth_override || undefined,
      filters: b.filters,
      advancedFilters: b.advanced_filters,
      includeMetadata: includeMetadata || includeDocuments || rr !== null,
    };
    const query = b.query
      ? b.query instanceof Float32Array
        ? b.query
        : Float32Array.from(b.query)
      : b.query_text !== undefined
        ? (await this.embedder.embed(orgId, queryEmbedding(r, b), [b.query_text], 'query'))[0]
        : null;
    const alpha = b.alpha ?? r.hybrid.alpha;
    const searched: { hits: ShardHit[]; receipt: Receipt | null } = !ds
      ? await this.sharded!.search(r, {
          ...searchOptions,
          query,
          ...(hybrid ? { keyword: { text: keywordText!, alpha } } : {}),
          includeVectors: b.include_embeddings === true,
        })
      : hybrid
        ? await ds.hybridSearch(query, keywordText!, { ...searchOptions, alpha }, this.runner)
        : await ds.searchDetailed(query!, searchOptions, this.runner);
    let hits = searched.hits;
    let rerankStatus: RerankStatus | undefined;
    let rerankScores: Map<number, number> | undefined;
    if (rr) {
      const byId = new Map(hits.map((h) => [h.id, h]));
      const outcome = await applyRerank(
        b.query_text ?? b.sparse_query ?? null,
        hits.map((h) => ({ id: h.id, text: typeof h.metadata?.text === 'string' ? h.metadata.text : null, score: h.score })),
        rr,
        providers!,
      );
      hits = outcome.ordered.map((c) => byId.get(c.id)!);
      rerankStatus = outcome.status;
      rerankScores = outcome.rerankScores;
    }
    const externalIds = this.datasets.mayHaveExternalIds(r);
    const results = hits.map((h) => {
      const out: SearchResult = { id: h.id, score: h.score, doc_kind: null };
      if (hybrid) {
        const f = h as Hit & FusedFields;
        Object.assign(out, { dense_score: f.dense_score, keyword_score: f.keyword_score, dense_contribution: f.dense_contribution, keyword_contribution: f.keyword_contribution });
      }
      if (externalIds) {
        const external = this.datasets.externalIdOf(r, h.id);
        if (external !== undefined) out.external_id = external;
      }
      if (includeMetadata) out.metadata = visibleMetadata(h.metadata ?? {}, includeDocuments);
      if (b.include_embeddings) out.embedding = (ds ? ds.getVector(h.id) : h.vector) ?? new Float32Array(0);
      const text = h.metadata?.text;
      if (includeDocuments) {
        out.doc_kind = typeof text === 'string' ? 'inline' : null;
        out.doc_value = typeof text === 'string' ? text : null;
      }
      if (rerankScores) out.rerank_score = rerankScores.get(h.id) ?? null;
      return out;
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    return { results, receipt: searched.receipt, ...(rerankStatus ? { rerank: rerankStatus } : {}), query_time_ms: Math.round(ms * 1000) / 1000 };
  }
}

/** The dataset's embedding, or the query's embedding_provider / embedding_model override. */
function queryEmbedding(r: DatasetRecord, b: SearchRequest): EmbeddingTarget {
  if (b.embedding_provider === undefined && b.embedding_model === undefined) return { ...r.embedding, dim: r.dim };
  const provider = b.embedding_provider ?? r.embedding.provider;
  const model = b.embedding_model ?? (provider === r.embedding.provider ? r.embedding.model : undefined);
  if (!model) throw badRequest('embedding_provider given without embedding_model: name the model too');
  return { provider, model, ...(provider === r.embedding.provider && r.embedding.secret_ref ? { secret_ref: r.embedding.secret_ref } : {}), dim: r.dim };
}
