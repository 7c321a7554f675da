/**
 * Internal routes of cluster mode, called by other nodes' routers with the cluster's secret (never
 * in the OpenAPI document): a shard replica hosted here applies a write up to a seq (the writer's
 * ack), searches, or reads one vector. Bodies are cluster/replica-wire.ts's.
 */
import type { ShardHost } from '../../cluster/shard-host.js';
import * as W from '../../cluster/replica-wire.js';
import { badRequest } from '../../errors/codes.js';
import type { AdvancedFilter } from '../../engine/index.js';
import { route, type Route } from '../http/router.js';
import { json } from '../http/types.js';

function shardParam(raw: string): number {
  const shard = Number(raw);
  if (!Number.isInteger(shard) || shard < 0) throw badRequest(`shard must be a whole number (got '${raw}')`);
  return shard;
}

export function internalRoutes(host: ShardHost): Route[] {
  return [
    route({
      method: 'POST', path: '/internal/shards/:dataset/:shard/sync', auth: 'cluster', summary: 'Apply the shard log up to a seq',
      body: W.SyncBody,
      handler: async ({ params, body }) => {
        const { applied, result } = await host.sync(params.dataset, shardParam(params.shard), body.seq, body.timeout_ms);
        return json(200, { applied, result } satisfies W.SyncAnswer);
      },
    }),
    route({
      method: 'POST', path: '/internal/shards/:dataset/:shard/search', auth: 'cluster', summary: "A shard replica's best hits",
      body: W.ReplicaSearchBody,
      handler: async ({ params, body }) => {
        const { hits, applied, receipt } = await host.search(
          params.dataset,
          shardParam(params.shard),
          body.min_seq,
          {
            query: body.query ? Float32Array.from(body.query) : null,
            ...(body.keyword ? { keyword: body.keyword } : {}),
            topK: body.top_k,
            nprobe: body.nprobe,
            rerankDepth: body.rerank_depth,
            filters: body.filters,
            advancedFilters: body.advanced_filters as AdvancedFilter[] | undefined,
            includeMetadata: body.include_metadata,
            includeVectors: body.include_vectors,
          },
          body.wait_ms,
        );
        const out: W.ReplicaHit[] = hits.map(({ vector, ...h }) => (vector ? { ...h, vector: Array.from(vector) } : h));
        return json(200, { hits: out, applied, receipt } satisfies W.ReplicaSearchAnswer);
      },
    }),
    route({
      method: 'POST', path: '/internal/shards/:dataset/:shard/point', auth: 'cluster', summary: 'One vector of a shard replica',
      body: W.PointBody,
      handler: async ({ params, body }) => {
        const found = await host.point(params.dataset, shardParam(params.shard), body.min_seq, body.id, body.with_vector, body.wait_ms);
        const answer: W.PointAnswer = !found ? { found: false } : { found: true, metadata: found.metadata, ...(found.vector ? { vector: Array.from(found.vector) } : {}) };
        return json(200, answer);
      },
    }),
    route({
      method: 'POST', path: '/internal/shards/:dataset/:shard/rows', auth: 'cluster', summary: "Reads of a shard replica's rows (the answer tools')",
      body: W.RowsBody,
      handler: async ({ params, body }) => {
        const { min_seq, wait_ms, ...query } = body;
        return json(200, await host.rows(params.dataset, shardParam(params.shard), min_seq, wait_ms, query));
      },
    }),
    route({
      method: 'POST', path: '/internal/shards/:dataset/:shard/admin', auth: 'cluster', summary: "A shard replica's statistics, index rebuild or settings",
      body: W.AdminBody,
      handler: async ({ params, body }) => {
        const shard = shardParam(params.shard);
        if (body.op === 'stats') return json(200, await host.stats(params.dataset, shard));
        if (body.op === 'rebuild') return json(202, await host.rebuild(params.dataset, shard));
        if (body.op === 'tuning') return json(200, await host.tuning(params.dataset, shard));
        return json(200, await host.settings(params.dataset, shard, body.catalog_seq ?? 0));
      },
    }),
  ];
}
