/** Vector routes: insert (upsert), delete, payload, search (by vector or by text) and embed. */
import type { DatasetService } from '../../catalog/datasets/service.js';
import type { Embedder } from '../../retrieval/embeddings/embedder.js';
import { MAX_TEXT_CHARS } from '../../retrieval/embeddings/local.js';
import * as R from '../../retrieval/requests.js';
import type { SearchService } from '../../retrieval/search.js';
import type { VectorWrites } from '../../retrieval/vectors.js';
import { float32Binary } from '../http/msgpack.js';
import { reply, route, type Route } from '../http/router.js';
import { json } from '../http/types.js';
import type { Metrics } from '../metrics.js';

export interface VectorRouteDeps {
  datasets: DatasetService;
  writes: VectorWrites;
  search: SearchService;
  embedder: Embedder;
  metrics: Metrics;
}

export function vectorRoutes({ datasets, writes, search, embedder, metrics }: VectorRouteDeps): Route[] {
  return [
    route({
      method: 'POST', path: '/datasets/:datasetId/insert', auth: 'key', summary: 'Insert or replace vectors (JSON or msgpack)',
      body: R.InsertVectors, msgpack: true, responses: { 200: R.InsertResponse },
      description:
        'An upsert: an existing id is replaced. Returns {inserted, embedded}. A vector without values but with ' +
        "metadata.text is embedded with the dataset's embedding model first (embedded counts those). String ids map " +
        'to integers with 64-bit FNV-1a masked to 53 bits; two strings on one integer answer 409 id_collision. In ' +
        'msgpack, values are float32 binaries. The answer comes once every row is durable and searchable; a request past ' +
        '2 MiB of values commits in slices of about that size, in order, so a crash before the answer may keep some ' +
        'whole slices (a retry of the same request finishes it).',
      handler: async (ctx) => {
        const r = datasets.get(ctx.caller.orgId, ctx.params.datasetId);
        return reply(ctx, 200, await writes.insert(ctx.caller.orgId, r, ctx.body));
      },
    }),
    route({
      method: 'DELETE', path: '/datasets/:datasetId/vectors', auth: 'key', summary: 'Delete vectors by id',
      body: R.DeleteVectors, responses: { 200: R.DeleteResponse },
      description:
        'Returns {deleted}: how many of the ids were there. Once answered, the ids are gone from every search that starts after. ' +
        'write_concern counts the replicas that applied the delete before the answer: on one machine every level is met by the ' +
        'local commit; in cluster mode `default` waits for every in-sync replica (one that misses the ack timeout leaves the ' +
        'in-sync set, so none that serves searches still holds the ids), `one`, `quorum` and `all` wait for 1, a majority, or every ' +
        'replica of each touched shard. 503 vecstack_router_failed: before anything is written when too few replicas are in sync ' +
        'for the level, or after the delete is logged when too few applied it in time; retrying the same request is safe.',
      handler: async ({ caller, params, body }) => json(200, await writes.delete(datasets.get(caller.orgId, params.datasetId), body)),
    }),
    {
      method: 'GET', path: '/datasets/:datasetId/payload/:vectorId', auth: 'key', summary: 'Stored metadata of one vector',
      responses: { 200: R.PayloadResponse },
      handler: async ({ caller, params }) => json(200, await writes.payload(datasets.get(caller.orgId, params.datasetId), params.vectorId)),
    },
    route({
      method: 'POST', path: '/datasets/:datasetId/search', auth: 'key', summary: 'Search by vector with filters (JSON or msgpack)',
      body: R.SearchRequest, msgpack: true, vectorField: 'query', responses: { 200: R.SearchResponse },
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
        const r = datasets.get(ctx.caller.orgId, ctx.params.datasetId);
        const outcome = await search.search(ctx.caller.orgId, r, ctx.body);
        metrics.observeSearch();
        const results = outcome.results.map((h) =>
          h.embedding === undefined ? h : { ...h, embedding: ctx.msgpack ? float32Binary(h.embedding) : Array.from(h.embedding) },
        );
        return reply(ctx, 200, { results, query_time_ms: outcome.query_time_ms, receipt: outcome.receipt, ...(outcome.rerank ? { rerank: outcome.rerank } : {}) });
      },
    }),
    route({
      method: 'POST', path: '/datasets/:datasetId/embed', auth: 'key', summary: "Embed text with the dataset's embedding model",
      body: R.EmbedRequest, responses: { 200: R.EmbedResponse },
      description:
        `Body {text} or {texts} (1 to ${R.MAX_EMBED_TEXTS}); answers {embeddings: number[][], provider, model, dim}, one ` +
        'vector per text in order. The local model embeds texts longer than its 256-token window whole: windows cut ' +
        `between words, averaged by their token counts, re-normalised (up to ${MAX_TEXT_CHARS} characters a text; longer ones answer 400). Provider failures answer 502 upstream_error with ` +
        "the provider's message; a missing API key or provider setting answers 400.",
      handler: async ({ caller, params, body }) => {
        const r = datasets.get(caller.orgId, params.datasetId);
        const texts = body.texts ?? [body.text!];
        const target = { ...r.embedding, dim: r.dim };
        const vectors = await embedder.embed(caller.orgId, target, texts, 'document');
        return json(200, { embeddings: vectors.map((v) => Array.from(v)), provider: target.provider, model: target.model, dim: r.dim });
      },
    }),
  ];
}
