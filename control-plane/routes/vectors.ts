/** Vector routes: insert (upsert), delete, payload, search (by vector or by text) and embed. */
import type { Hit } from '../../engine/index.js';
import type { SearchPool } from '../../workers/index.js';
import type { DatasetRecord } from '../domain/dataset-record.js';
import type { DatasetService } from '../domain/datasets.js';
import type { Embedder, EmbeddingTarget } from '../embeddings/embedder.js';
import { toInternalId } from '../domain/ids.js';
import { ApiError } from '../errors.js';
import { float32Binary } from '../http/msgpack.js';
import { reply, type Route } from '../http/router.js';
import { json } from '../http/types.js';
import type { Metrics } from '../metrics.js';
import * as S from '../schemas/datasets.js';
import { parseRerankOption } from '../rerank/options.js';
import type { RerankProviders } from '../rerank/providers.js';
import { applyRerank } from '../rerank/rerank.js';
import type { RerankStatus } from '../rerank/types.js';
import type { ControlStore } from '../store.js';

type Scalar = string | number | boolean | null;
interface VectorIn {
  id: string | number;
  values?: number[] | Float32Array;
  metadata?: Record<string, Scalar>;
}

/** Metadata keys that point at storage and are never returned. */
const HIDDEN_KEYS = ['document_storage_key', 'document_storage_bucket', 'payload_ref'];

export function vectorRoutes(
  svc: DatasetService,
  store: ControlStore,
  pool: SearchPool,
  metrics: Metrics,
  rerank: RerankProviders,
  embedder: Embedder,
): Route[] {
  const externalIdOf = (r: DatasetRecord, id: number) => store.externalIds.get([r.id, id]);

  /** Integer ids of the request's ids; string ids are checked against the dataset's mapping. */
  function resolveIds(r: DatasetRecord, ids: (string | number)[], forWrite: boolean) {
    const out: { id: number; external?: string }[] = [];
    const inBatch = new Map<number, string | undefined>();
    ids.forEach((raw, i) => {
      const m = toInternalId(raw);
      if (!m) throw new ApiError('invalid_request', `ids[${i}] must be a safe integer or a non-empty string`);
      if (forWrite) {
        const prior = inBatch.has(m.id) ? inBatch.get(m.id) : externalIdOf(r, m.id);
        if (m.external !== undefined && prior !== undefined && prior !== m.external) {
          throw new ApiError('id_collision', `ids '${prior}' and '${m.external}' map to the same integer id ${m.id}`, { id: m.id });
        }
        inBatch.set(m.id, m.external);
      }
      out.push(m);
    });
    return out;
  }

  return [
    {
      method: 'POST', path: '/datasets/:datasetId/insert', auth: 'key', summary: 'Insert or replace vectors (JSON or msgpack)',
      body: S.insertVectors, msgpack: true,
      description:
        'An upsert: an existing id is replaced. Returns {inserted, embedded}. A vector without values but with ' +
        "metadata.text is embedded with the dataset's embedding model first (embedded counts those). String ids map " +
        'to integers with 64-bit FNV-1a masked to 53 bits; two strings on one integer answer 409 id_collision. In ' +
        'msgpack, values are float32 binaries.',
      handler: async (ctx) => {
        const { caller, params, body } = ctx;
        const r = svc.get(caller.orgId, params.datasetId);
        const ds = svc.engineOf(r);
        const vectors = (body as { vectors: VectorIn[] }).vectors;
        const values = new Float32Array(vectors.length * r.dim);
        const toEmbed: number[] = [];
        vectors.forEach((v, i) => {
          if (v.values === undefined) return void toEmbed.push(i);
          if (v.values.length !== r.dim) {
            throw new ApiError('invalid_request', `vectors[${i}].values has ${v.values.length} values; the dataset dimension is ${r.dim}`);
          }
          values.set(v.values, i * r.dim);
        });
        const ids = resolveIds(r, vectors.map((v) => v.id), true);
        if (toEmbed.length > 0) {
          const embedded = await embedder.embed(caller.orgId, { ...r.embedding, dim: r.dim }, toEmbed.map((i) => String(vectors[i].metadata!.text)), 'document');
          toEmbed.forEach((i, j) => values.set(embedded[j], i * r.dim));
        }
        const metadata = vectors.map((v) => v.metadata ?? {});
        await ds.upsert(ids.map((m) => m.id), values, metadata);
        await store.write(() => {
          for (const m of ids) {
            if (m.external !== undefined) store.externalIds.put([r.id, m.id], m.external);
            else store.externalIds.remove([r.id, m.id]);
          }
        });
        await svc.observeMetadata(r, metadata);
        return reply(ctx, 200, { inserted: vectors.length, embedded: toEmbed.length });
      },
    },
    {
      method: 'DELETE', path: '/datasets/:datasetId/vectors', auth: 'key', summary: 'Delete vectors by id', body: S.deleteVectors,
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const ds = svc.engineOf(r);
        const ids = resolveIds(r, (body as { ids: (string | number)[] }).ids, false);
        const deleted = await ds.delete(ids.map((m) => m.id));
        await store.write(() => {
          for (const m of ids) store.externalIds.remove([r.id, m.id]);
        });
        return json(200, { deleted });
      },
    },
    {
      method: 'GET', path: '/datasets/:datasetId/payload/:vectorId', auth: 'key', summary: 'Stored metadata of one vector',
      handler: async ({ caller, params }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const ds = svc.engineOf(r);
        const raw = /^-?\d+$/.test(params.vectorId) ? Number(params.vectorId) : params.vectorId;
        const m = toInternalId(raw);
        const metadata = m ? ds.getMetadata(m.id) : undefined;
        if (!m || metadata === undefined) throw new ApiError('not_found', `vector ${params.vectorId} was not found`);
        const external = externalIdOf(r, m.id);
        return json(200, { id: m.id, ...(external !== undefined ? { external_id: external } : {}), metadata: visible(metadata, true) });
      },
    },
    {
      method: 'POST', path: '/datasets/:datasetId/search', auth: 'key', summary: 'Search by vector with filters (JSON or msgpack)',
      body: S.search, msgpack: true,
      description:
        'Returns {results, query_time_ms, receipt, rerank?}. Each result: id (integer), score (ascending: cosine 1 - similarity, ' +
        'l2 squared distance, ip negated dot product), external_id (when inserted with a string id), metadata (unless ' +
        'include_metadata is false; text only with include_documents), embedding (include_embeddings; float32 binary in ' +
        'msgpack), doc_kind and doc_value (include_documents). Hybrid (hybrid true, or the dataset\'s setting with ' +
        'sparse_query): candidates of both sides are fused on normalised scores, alpha * dense + (1 - alpha) * keyword, ' +
        'where dense is the distance min-max normalised over the candidates and keyword the BM25 score over the best one; ' +
        'score is 1 - fused, and each result carries dense_score, keyword_score, dense_contribution and keyword_contribution. ' +
        'Rerank reorders the top_k candidates (top_k raised to top_n) with the provider and cuts to top_n; results carry ' +
        'rerank_score and the response a rerank status {requested, applied, provider, model, reason?, latency_ms, documents}; ' +
        'failures fall back to the original order (fail_open, the default) or answer 502 upstream_error (fail_open false). ' +
        'The receipt says how the engine searched: strategy (exact, index, widened, mixed), candidates_scored, ' +
        'partitions_searched, isa, per-partition details, elapsed_us.',
      handler: async (ctx) => {
        const { caller, params, body } = ctx;
        const t0 = process.hrtime.bigint();
        const r = svc.get(caller.orgId, params.datasetId);
        const ds = svc.engineOf(r);
        const b = body as SearchBody;
        if (b.query !== undefined && b.query_text !== undefined) throw new ApiError('invalid_request', 'send either query or query_text, not both');
        if (b.query_text !== undefined && b.query_text.trim() === '') throw new ApiError('invalid_request', 'query_text is empty');
        if (b.query_text === undefined && (b.embedding_model !== undefined || b.embedding_provider !== undefined)) {
          throw new ApiError('invalid_request', 'embedding_model and embedding_provider apply to query_text only');
        }
        if (b.query !== undefined && b.query.length !== r.dim) {
          throw new ApiError('invalid_request', `query has ${b.query.length} values; the dataset dimension is ${r.dim}`);
        }
        // Hybrid per query, else the dataset's setting; it needs keyword text to search with.
        const keywordText = b.sparse_query ?? b.query_text;
        const hybrid = b.hybrid ?? (r.hybrid.enabled && keywordText !== undefined);
        if (hybrid && (keywordText === undefined || keywordText.trim() === '')) {
          throw new ApiError('invalid_request', 'hybrid search needs keyword text: send sparse_query');
        }
        if (!b.query && b.query_text === undefined && !hybrid) throw new ApiError('invalid_request', 'query (a vector) or query_text is required');
        const topK = b.top_k ?? 10;
        const providers = rerank.providersFor(caller.orgId);
        const rr = parseRerankOption(b.rerank, topK, { provider: rerank.defaultProvider, providers });
        const includeMetadata = b.include_metadata ?? true;
        const searchOptions = {
          topK: rr ? Math.max(topK, rr.top_n) : topK,
          nprobe: b.nprobe_override,
          rerankDepth: b.rerank_depth_override || undefined,
          filters: b.filters,
          advancedFilters: b.advanced_filters,
          includeMetadata: includeMetadata || b.include_documents === true || rr !== null,
        };
        const query = b.query
          ? Float32Array.from(b.query)
          : b.query_text !== undefined
            ? (await embedder.embed(caller.orgId, queryEmbedding(r, b), [b.query_text], 'query'))[0]
            : null;
        const searched: { hits: Hit[]; receipt: unknown } = hybrid
          ? await pool.hybridSearch(ds, query, keywordText!, { ...searchOptions, alpha: b.alpha ?? r.hybrid.alpha })
          : await pool.search(ds, query!, searchOptions);
        metrics.observeSearch();
        const receipt = searched.receipt;
        let hits = searched.hits;
        let rerankStatus: RerankStatus | undefined;
        let rerankScores: Map<number, number> | undefined;
        if (rr) {
          const byId = new Map(hits.map((h) => [h.id, h]));
          const outcome = await applyRerank(
            b.query_text ?? b.sparse_query ?? null,
            hits.map((h) => ({ id: h.id, text: typeof h.metadata?.text === 'string' ? h.metadata.text : null, score: h.score })),
            rr,
            providers,
          );
          hits = outcome.ordered.map((c) => byId.get(c.id)!);
          rerankStatus = outcome.status;
          rerankScores = outcome.rerankScores;
        }
        const results = hits.map((h) => {
          const out: Record<string, unknown> = { id: h.id, score: h.score };
          if (hybrid) {
            const f = h as Hit & { dense_score: number | null; keyword_score: number; dense_contribution: number; keyword_contribution: number };
            Object.assign(out, {
              dense_score: f.dense_score,
              keyword_score: f.keyword_score,
              dense_contribution: f.dense_contribution,
              keyword_contribution: f.keyword_contribution,
            });
          }
          const external = externalIdOf(r, h.id);
          if (external !== undefined) out.external_id = external;
          if (includeMetadata) out.metadata = visible(h.metadata ?? {}, b.include_documents === true);
          if (b.include_embeddings) {
            const v = ds.getVector(h.id) ?? new Float32Array(0);
            out.embedding = ctx.msgpack ? float32Binary(v) : Array.from(v);
          }
          const text = h.metadata?.text;
          out.doc_kind = b.include_documents ? (typeof text === 'string' ? 'inline' : null) : null;
          if (b.include_documents) out.doc_value = typeof text === 'string' ? text : null;
          if (rerankScores) out.rerank_score = rerankScores.get(h.id) ?? null;
          return out;
        });
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        return reply(ctx, 200, { results, query_time_ms: Math.round(ms * 1000) / 1000, receipt, ...(rerankStatus ? { rerank: rerankStatus } : {}) });
      },
    },
    {
      method: 'POST', path: '/datasets/:datasetId/embed', auth: 'key', summary: "Embed text with the dataset's embedding model",
      body: S.embed,
      description:
        `Body {text} or {texts} (1 to ${S.MAX_EMBED_TEXTS}); answers {embeddings: number[][], provider, model, dim}, one ` +
        'vector per text in order. The local model embeds texts longer than its 256-token window whole: windows cut ' +
        'between words, averaged by their token counts, re-normalised. Provider failures answer 502 upstream_error with ' +
        "the provider's message; a missing API key or provider setting answers 400.",
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const b = body as { text?: string; texts?: string[] };
        const texts = b.texts ?? [b.text!];
        const target = { ...r.embedding, dim: r.dim };
        const vectors = await embedder.embed(caller.orgId, target, texts, 'document');
        return json(200, { embeddings: vectors.map((v) => Array.from(v)), provider: target.provider, model: target.model, dim: r.dim });
      },
    },
    ...notYet('GET', '/datasets/:datasetId/documents', 'the document catalog comes with ingestion, which is not built yet'),
    ...notYet('GET', '/datasets/:datasetId/documents/:documentId/download', 'the document catalog comes with ingestion, which is not built yet'),
  ];
}

/** The dataset's embedding, or the query's embedding_provider / embedding_model override. */
function queryEmbedding(r: DatasetRecord, b: SearchBody): EmbeddingTarget {
  if (b.embedding_provider === undefined && b.embedding_model === undefined) return { ...r.embedding, dim: r.dim };
  const provider = b.embedding_provider ?? r.embedding.provider;
  const model = b.embedding_model ?? (provider === r.embedding.provider ? r.embedding.model : undefined);
  if (!model) throw new ApiError('invalid_request', 'embedding_provider given without embedding_model: name the model too');
  return { provider, model, ...(provider === r.embedding.provider && r.embedding.secret_ref ? { secret_ref: r.embedding.secret_ref } : {}), dim: r.dim };
}

interface SearchBody {
  query?: number[] | Float32Array;
  query_text?: string;
  embedding_model?: string;
  embedding_provider?: string;
  top_k?: number;
  filters?: Record<string, Scalar>;
  advanced_filters?: { field: string; op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte' | 'in'; value?: Scalar; values?: Scalar[] }[];
  nprobe_override?: number;
  rerank_depth_override?: number;
  rerank?: unknown;
  hybrid?: boolean;
  sparse_query?: string;
  alpha?: number;
  include_embeddings?: boolean;
  include_documents?: boolean;
  include_metadata?: boolean;
}

/** Metadata as returned: storage pointers never, document text only with include_documents. */
function visible(m: Record<string, Scalar>, includeDocuments: boolean): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const [k, v] of Object.entries(m)) {
    if (HIDDEN_KEYS.includes(k)) continue;
    if (!includeDocuments && (k === 'text' || k === 'doc_value')) continue;
    out[k] = v;
  }
  return out;
}

function notYet(method: string, path: string, message: string): Route[] {
  return [{
    method, path, auth: 'key', summary: `${message} (501)`,
    handler: async () => {
      throw new ApiError('not_implemented', message);
    },
  }];
}
