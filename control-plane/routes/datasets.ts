/** Dataset routes: lifecycle, schema, index, policies, SLA, stats. */
import type { DatasetRecord } from '../../catalog/datasets/record.js';
import type { DatasetService } from '../../catalog/datasets/service.js';
import { badRequest } from '../../errors/codes.js';
import { indexView, slaView } from '../../catalog/datasets/views.js';
import { route, type Route } from '../http/router.js';
import { OffsetPaging } from '../../contract/common.js';
import { json } from '../http/types.js';
import * as S from '../schemas/datasets.js';

export function datasetRoutes(svc: DatasetService): Route[] {
  const view = (r: DatasetRecord) => svc.view(r);
  return [
    route({
      method: 'GET', path: '/datasets', auth: 'key', summary: 'List the datasets of the organization', query: OffsetPaging,
      description: 'Answers {datasets, total, limit, offset}.',
      responses: { 200: S.DatasetList },
      handler: async ({ caller, query: { limit, offset } }) => {
        const { datasets, total } = svc.list(caller.orgId, limit, offset);
        return json(200, { datasets: await Promise.all(datasets.map(view)), total, limit, offset });
      },
    }),
    route({
      method: 'POST', path: '/datasets', auth: 'key', summary: 'Create a dataset', body: S.CreateDataset, responses: { 201: S.Dataset },
      description:
        'Names are unique in the organization (as Pinecone index and Qdrant collection names are): a second dataset ' +
        'of the same name answers 409 dataset_exists with the id of the one that exists. Answers 201 once the record ' +
        'is accepted; the engine is provisioned in the background (503 dataset_not_ready meanwhile, or POST ensure-engine).',
      handler: async ({ caller, body }) => json(201, await view(await svc.create(caller.orgId, body))),
    }),
    {
      method: 'GET', path: '/datasets/:datasetId', auth: 'key', summary: 'Get a dataset', responses: { 200: S.Dataset },
      handler: async ({ caller, params }) => json(200, await view(svc.get(caller.orgId, params.datasetId))),
    },
    {
      method: 'DELETE', path: '/datasets/:datasetId', auth: 'key', summary: 'Delete a dataset, its vectors, index files and bulk-load uploads', responses: { 204: null },
      handler: async ({ caller, params }) => {
        await svc.delete(caller.orgId, params.datasetId);
        return { status: 204 };
      },
    },
    {
      method: 'POST', path: '/datasets/:datasetId/ensure-engine', auth: 'key', summary: 'Provision the dataset engine now', responses: { 200: S.Dataset },
      handler: async ({ caller, params }) => json(200, await view(await svc.ensure(caller.orgId, params.datasetId))),
    },
    {
      method: 'GET', path: '/datasets/:datasetId/stats', auth: 'key', summary: 'Vector count, storage, index status', responses: { 200: S.Stats },
      handler: async ({ caller, params }) => {
        const s = await svc.stats(svc.get(caller.orgId, params.datasetId));
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
      method: 'GET', path: '/datasets/:datasetId/index', auth: 'key', summary: 'Index type and build status', responses: { 200: S.IndexStatus },
      handler: async ({ caller, params }) => json(200, indexView(await svc.stats(svc.get(caller.orgId, params.datasetId)))),
    },
    route({
      method: 'POST', path: '/datasets/:datasetId/index', auth: 'key', summary: 'Set the index type and rebuild in the background',
      body: S.IndexTypeBody, responses: { 202: S.IndexStatus },
      description: 'Answers 202 with the index status, building from the moment the rebuild is accepted.',
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const next = await svc.setIndexType(r, body.index_type ?? 'sable', true);
        return json(202, indexView(await svc.stats(next)));
      },
    }),
    {
      method: 'POST', path: '/datasets/:datasetId/index/rebuild', auth: 'key', summary: 'Rebuild the index in the background',
      responses: { 202: S.IndexStatus },
      description: 'Answers 202 with status building (progress 0 until the rebuild starts); poll GET /datasets/{id}/index.',
      handler: async ({ caller, params }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        return json(202, indexView(await svc.rebuild(r)));
      },
    },
    route({
      method: 'PATCH', path: '/datasets/:datasetId/schema', auth: 'admin', summary: 'Merge or replace the metadata schema',
      body: S.PatchSchema, responses: { 200: S.SchemaAnswer },
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const schema = await svc.patchSchema(r, body);
        const next = svc.get(caller.orgId, r.id);
        return json(200, { schema, schema_version: next.schema_version });
      },
    }),
    {
      method: 'GET', path: '/datasets/:datasetId/hybrid', auth: 'key', summary: 'Hybrid search configuration', responses: { 200: S.HybridAnswer },
      handler: async ({ caller, params }) => json(200, svc.get(caller.orgId, params.datasetId).hybrid),
    },
    route({
      method: 'PUT', path: '/datasets/:datasetId/hybrid/enabled', auth: 'key', summary: 'Turn hybrid search on or off',
      body: S.HybridEnabled, responses: { 200: S.HybridAnswer },
      handler: async ({ caller, params, body }) => {
        const r = await svc.update(svc.get(caller.orgId, params.datasetId), (cur) => (cur.hybrid.enabled = body.enabled));
        return json(200, r.hybrid);
      },
    }),
    route({
      method: 'PUT', path: '/datasets/:datasetId/hybrid/alpha', auth: 'key', summary: 'Set the hybrid weight (0 keyword, 1 vector)',
      body: S.HybridAlpha, responses: { 200: S.HybridAnswer },
      handler: async ({ caller, params, body }) => {
        const r = await svc.update(svc.get(caller.orgId, params.datasetId), (cur) => (cur.hybrid.alpha = body.alpha));
        return json(200, r.hybrid);
      },
    }),
    {
      method: 'GET', path: '/datasets/:datasetId/promotion-policy', auth: 'key', summary: 'Promotion policy of the growing partition',
      responses: { 200: S.PromotionAnswer },
      handler: async ({ caller, params }) => json(200, await svc.promotionPolicy(svc.get(caller.orgId, params.datasetId))),
    },
    route({
      method: 'PUT', path: '/datasets/:datasetId/promotion-policy', auth: 'key', summary: 'Update the promotion policy',
      body: S.PromotionPolicy, responses: { 200: S.PromotionAnswer },
      handler: async ({ caller, params, body }) => json(200, await svc.setPromotionPolicy(svc.get(caller.orgId, params.datasetId), body)),
    }),
    route({
      method: 'POST', path: '/datasets/:datasetId/defaults/index-type', auth: 'key', summary: 'Default index type of new partitions',
      body: S.IndexTypeBody, responses: { 200: S.Dataset },
      handler: async ({ caller, params, body }) => {
        const r = svc.get(caller.orgId, params.datasetId);
        const indexType = body.index_type;
        if (!indexType) throw badRequest('index_type is required');
        return json(200, await view(await svc.setIndexType(r, indexType, false)));
      },
    }),
    route({
      method: 'POST', path: '/datasets/:datasetId/defaults/tuning', auth: 'key', summary: 'Default tuning of new partitions',
      body: S.Tuning, responses: { 200: S.Dataset },
      handler: async ({ caller, params, body }) => {
        return json(200, await view(await svc.setTuning(svc.get(caller.orgId, params.datasetId), body)));
      },
    }),
    {
      method: 'GET', path: '/datasets/:datasetId/sla', auth: 'key', summary: 'SLA and the tuner state', responses: { 200: S.SlaAnswer },
      handler: async ({ caller, params }) => json(200, slaView(await svc.sla(svc.get(caller.orgId, params.datasetId)))),
    },
    route({
      method: 'PUT', path: '/datasets/:datasetId/sla', auth: 'key', summary: 'Set the SLA the tuner works toward',
      body: S.Sla, responses: { 200: S.SlaAnswer },
      handler: async ({ caller, params, body }) => json(200, slaView(await svc.setSla(svc.get(caller.orgId, params.datasetId), body))),
    }),
  ];
}
