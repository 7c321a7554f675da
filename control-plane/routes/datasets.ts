/** Dataset routes: lifecycle, schema, index, policies, SLA, stats. */
import { publicDataset } from '../domain/dataset-record.js';
import type { DatasetService } from '../domain/datasets.js';
import { engineTuning } from '../domain/datasets.js';
import { ApiError } from '../errors.js';
import type { Route } from '../http/router.js';
import { json } from '../http/types.js';
import * as S from '../schemas/datasets.js';

type Body = Record<string, unknown>;

export function pageOf(query: URLSearchParams): { limit: number; offset: number } {
  const limit = query.get('limit') === null ? 50 : Number(query.get('limit'));
  const offset = query.get('offset') === null ? 0 : Number(query.get('offset'));
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new ApiError('invalid_request', 'limit must be an integer from 1 to 200');
  if (!Number.isInteger(offset) || offset < 0) throw new ApiError('invalid_request', 'offset must be a non-negative integer');
  return { limit, offset };
}

export function datasetRoutes(svc: DatasetService): Route[] {
  const view = (r: Parameters<typeof publicDataset>[0]) => publicDataset(r, svc.isReady(r.id));
  return [
    {
      method: 'GET', path: '/datasets', auth: 'key', summary: 'List the datasets of the organization',
      handler: async ({ req, caller }) => {
        const { limit, offset } = pageOf(req.query);
        const { datasets, total } = svc.list(caller.orgId, limit, offset);
        return json(200, { datasets: datasets.map(view), total, limit, offset });
      },
    },
    {
      method: 'POST', path: '/datasets', auth: 'key', summary: 'Create a dataset', body: S.createDataset,
      handler: async ({ caller, body }) => json(201, view(await svc.create(caller.orgId, body as Body))),
    },
    {
      method: 'GET', path: '/datasets/:datasetId', auth: 'key', summary: 'Get a dataset',
      handler: async ({ caller, params }) => json(200, view(svc.get(caller.orgId, params.datasetId))),
    },
    {
      method: 'DELETE', path: '/datasets/:datasetId', auth: 'key', summary: 'Delete a dataset, its vectors and index files',
      handler: async ({ caller, params }) => {
        await svc.delete(caller.orgId, params.datasetId);
        return { status: 204 };
      },
    },
    {
      method: 'POST', path: '/datasets/:datasetId/ensure-engine', auth: 'key', summary: 'Provision the dataset engine now',
      handler: async ({ caller, params }) => json(200, view(await svc.ensure(caller.orgId, params.datasetId))),
    },
    {
      method: 'GET', path: '/datasets/:datasetId/stats', auth: 'key', summary: 'Vector count, storage, index status',
      handler: async ({ caller, params }) => {
        const s = svc.engineOf(svc.get(caller.orgId, params.datasetId)).stats();
        return json(200, {
          vector_count: s.vector_count,
          deleted_count: s.deleted_count,
          storage_bytes: s.storage_bytes,
          memory_bytes: s.memory_bytes,
          index_type: s.index_type,
          index_status: s.index_status,
          partitions: s.partitions,
          dim: s.dim,
          metric: s.metric,
        });
      },
    },
    {
      method: 'GET', path: '/datasets/:datasetId/index', auth: 'key', summary: 'Index type and build status',
      handler: async ({ caller, params }) => json(200, indexStatus(svc, caller.orgId, params.datasetId)),
    },
    {
      method: 'POST', path: '/datasets/:datasetId/index', auth: 'key', summary: 'Set the index type and rebuild in the background', body: S.indexType,
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const ds = svc.engineOf(r);
        const indexType = ((body as Body).index_type as typeof r.index_type | undefined) ?? 'sable';
        await svc.update(r, (cur) => (cur.index_type = indexType));
        await ds.setDefaults({ indexType });
        void ds.rebuild().catch((e) => console.error(`sable: index rebuild of ${r.id} failed:`, e));
        return json(202, indexStatus(svc, caller.orgId, r.id));
      },
    },
    {
      method: 'POST', path: '/datasets/:datasetId/index/rebuild', auth: 'key', summary: 'Rebuild the index in the background',
      handler: async ({ caller, params }) => {
        const ds = svc.engineOf(svc.get(caller.orgId, params.datasetId));
        void ds.rebuild().catch((e) => console.error(`sable: index rebuild of ${params.datasetId} failed:`, e));
        return json(202, indexStatus(svc, caller.orgId, params.datasetId));
      },
    },
    {
      method: 'PATCH', path: '/datasets/:datasetId/schema', auth: 'admin', summary: 'Merge or replace the metadata schema', body: S.patchSchema,
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const schema = await svc.patchSchema(r, body as Body);
        const next = svc.get(caller.orgId, r.id);
        return json(200, { schema, schema_version: next.schema_version });
      },
    },
    {
      method: 'GET', path: '/datasets/:datasetId/hybrid', auth: 'key', summary: 'Hybrid search configuration',
      handler: async ({ caller, params }) => json(200, svc.get(caller.orgId, params.datasetId).hybrid),
    },
    {
      method: 'PUT', path: '/datasets/:datasetId/hybrid/enabled', auth: 'key', summary: 'Turn hybrid search on or off', body: S.hybridEnabled,
      handler: async ({ caller, params, body }) => {
        const r = await svc.update(svc.get(caller.orgId, params.datasetId), (cur) => (cur.hybrid.enabled = (body as Body).enabled as boolean));
        return json(200, r.hybrid);
      },
    },
    {
      method: 'PUT', path: '/datasets/:datasetId/hybrid/alpha', auth: 'key', summary: 'Set the hybrid weight (0 keyword, 1 vector)', body: S.hybridAlpha,
      handler: async ({ caller, params, body }) => {
        const r = await svc.update(svc.get(caller.orgId, params.datasetId), (cur) => (cur.hybrid.alpha = (body as Body).alpha as number));
        return json(200, r.hybrid);
      },
    },
    {
      method: 'GET', path: '/datasets/:datasetId/promotion-policy', auth: 'key', summary: 'Promotion policy of the growing partition',
      handler: async ({ caller, params }) => json(200, svc.engineOf(svc.get(caller.orgId, params.datasetId)).promotionPolicy),
    },
    {
      method: 'PUT', path: '/datasets/:datasetId/promotion-policy', auth: 'key', summary: 'Update the promotion policy', body: S.promotionPolicy,
      handler: async ({ caller, params, body }) =>
        json(200, await svc.engineOf(svc.get(caller.orgId, params.datasetId)).setPromotionPolicy(body as never)),
    },
    {
      method: 'POST', path: '/datasets/:datasetId/defaults/index-type', auth: 'key', summary: 'Default index type of new partitions', body: S.indexType,
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const indexType = (body as Body).index_type as typeof r.index_type | undefined;
        if (!indexType) throw new ApiError('invalid_request', 'index_type is required');
        const ds = svc.engineOf(r);
        const next = await svc.update(r, (cur) => (cur.index_type = indexType));
        await ds.setDefaults({ indexType });
        return json(200, publicDataset(next, true));
      },
    },
    {
      method: 'POST', path: '/datasets/:datasetId/defaults/tuning', auth: 'key', summary: 'Default tuning of new partitions', body: S.tuning,
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const t = body as DatasetTuning;
        const ds = svc.engineOf(r);
        const next = await svc.update(r, (cur) => {
          cur.tuning = { ...cur.tuning, ...t };
        });
        await ds.setDefaults({ tuning: engineTuning(next.tuning) });
        return json(200, publicDataset(next, true));
      },
    },
    {
      method: 'GET', path: '/datasets/:datasetId/sla', auth: 'key', summary: 'SLA and the tuner state',
      handler: async ({ caller, params }) => json(200, slaView(svc.engineOf(svc.get(caller.orgId, params.datasetId)).sla)),
    },
    {
      method: 'PUT', path: '/datasets/:datasetId/sla', auth: 'key', summary: 'Set the SLA the tuner works toward', body: S.sla,
      handler: async ({ caller, params, body }) =>
        json(200, slaView(await svc.engineOf(svc.get(caller.orgId, params.datasetId)).setSla(body as never))),
    },
  ];
}

type DatasetTuning = { nlist?: number; nprobe_min?: number; nprobe_max?: number; m?: number; ef_construction?: number };

function slaView(s: import('../../engine/index.js').SlaStatus) {
  return {
    target_p99_us: s.target_p99_us,
    min_nprobe: s.min_nprobe,
    max_nprobe_fraction: s.max_nprobe_fraction,
    min_beam_width: s.min_beam_width,
    max_beam_width: s.max_beam_width,
    observed_p99_us: s.observed_p99_us,
    current_nprobe: s.current_nprobe,
    current_beam_width: s.current_beam_width,
  };
}

function indexStatus(svc: DatasetService, orgId: string, id: string) {
  const r = svc.get(orgId, id);
  const s = svc.engineOf(r).stats();
  return {
    index_type: s.index_type,
    status: s.index_status,
    progress: s.index_status === 'ready' ? 100 : s.progress,
    partitions: s.partitions,
    built_at: s.built_at,
  };
}
