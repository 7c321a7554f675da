/** Source routes: CRUD, validate, types and their config schemas, references, cleanup, uploads to file_upload sources. */
import { Type } from '@sinclair/typebox';
import { SableError } from '../../errors/codes.js';
import type { IngestJobs } from '../../ingest/jobs.js';
import * as I from '../../ingest/requests.js';
import type { SourceService } from '../../ingest/sources/service.js';
import { secretFields, SOURCE_CONFIGS, SOURCE_TYPE_NAMES, SOURCE_TYPES, SUPPORTS_AUTH, type SourceType } from '../../ingest/sources/types.js';
import { OffsetPaging } from '../../contract/common.js';
import { route, type Route } from '../http/router.js';
import { json, type Request } from '../http/types.js';
import * as S from '../schemas/uploads.js';

/** The config schema of a type as GET /ingestion/source-types/{type} shows it. */
export function sourceTypeSchema(type: SourceType) {
  return {
    type,
    name: SOURCE_TYPE_NAMES[type],
    supports_auth: SUPPORTS_AUTH[type],
    secret_fields: secretFields(type),
    schema: JSON.parse(JSON.stringify(SOURCE_CONFIGS[type])) as unknown,
  };
}

export function sourceRoutes(sources: SourceService, ingest: IngestJobs, uploadBase: (req: Request) => string): Route[] {
  return [
    {
      method: 'GET', path: '/ingestion/source-types', auth: 'key', summary: 'The nine source types', responses: { 200: I.SourceTypes },
      handler: async () => json(200, { source_types: SOURCE_TYPES.map((type) => ({ type, name: SOURCE_TYPE_NAMES[type], supports_auth: SUPPORTS_AUTH[type] })) }),
    },
    {
      method: 'GET', path: '/ingestion/source-types/:type', auth: 'key', summary: "One type's config schema (required fields, defaults, secret fields marked)",
      description: 'Answers {type, name, supports_auth, secret_fields, schema}: schema is the JSON Schema that checks the config of POST /ingestion/sources and validate; secret fields carry writeOnly and x-secret.',
      handler: async ({ params }) => {
        if (!(SOURCE_TYPES as readonly string[]).includes(params.type)) throw new SableError('not_found', `no source type '${params.type}' (types: ${SOURCE_TYPES.join(', ')})`);
        return json(200, sourceTypeSchema(params.type as SourceType));
      },
    },
    route({
      method: 'GET', path: '/ingestion/sources', auth: 'key', summary: 'List sources', query: OffsetPaging, responses: { 200: I.SourceList },
      handler: async ({ caller, query: { limit, offset } }) => json(200, { ...sources.list(caller.orgId, limit, offset), limit, offset }),
    }),
    route({
      method: 'POST', path: '/ingestion/sources/validate', auth: 'key', summary: 'Check a source config without saving it', body: I.SourceValidate,
      responses: { 200: I.Validation },
      description: 'Answers 200 with success false and a message for a config its type refuses; normalized_config has every default filled in (secrets ********).',
      handler: async ({ caller, body }) => json(200, await sources.validate(caller.orgId, body.source_type, body.config)),
    }),
    route({
      method: 'POST', path: '/ingestion/sources', auth: 'key', summary: 'Create a source', body: I.SourceCreate, responses: { 201: I.Source },
      description: "The config is checked against its type's schema (GET /ingestion/source-types/{type}); secret fields are stored encrypted and answered as ********.",
      handler: async ({ caller, body }) => json(201, sources.view(await sources.create(caller.orgId, body))),
    }),
    route({
      method: 'GET', path: '/ingestion/sources/unused', auth: 'key', summary: 'Sources with no enabled schedule and no job in flight', query: OffsetPaging, responses: { 200: I.SourceList },
      handler: async ({ caller, query: { limit, offset } }) => {
        const all = await sources.unused(caller.orgId);
        return json(200, { sources: all.slice(offset, offset + limit).map((s) => sources.view(s)), total: all.length, limit, offset });
      },
    }),
    {
      method: 'POST', path: '/ingestion/sources/cleanup', auth: 'key', summary: 'Delete every unused source', responses: { 200: I.Cleanup },
      handler: async ({ caller }) => json(200, await sources.cleanup(caller.orgId)),
    },
    {
      method: 'GET', path: '/ingestion/sources/:sourceId', auth: 'key', summary: 'Get a source', responses: { 200: I.Source },
      handler: async ({ caller, params }) => json(200, sources.view(sources.get(caller.orgId, params.sourceId))),
    },
    route({
      method: 'PATCH', path: '/ingestion/sources/:sourceId', auth: 'key', summary: "Change a source's name, description, metadata or config", body: I.SourcePatch,
      responses: { 200: I.Source },
      description: 'config replaces the whole config (checked like at creation); a secret field sent as ******** keeps its stored value.',
      handler: async ({ caller, params, body }) => json(200, sources.view(await sources.update(caller.orgId, params.sourceId, body))),
    }),
    route({
      method: 'DELETE', path: '/ingestion/sources/:sourceId', auth: 'key', summary: 'Delete a source', responses: { 204: null },
      query: Type.Object({ force: Type.Boolean({ default: false, description: 'disable the schedules that use the source first' }) }),
      errors: ['source_in_use'],
      description: '409 source_in_use with {references} while an enabled schedule or a pending or running job uses the source; force=true disables its schedules first. Documents already ingested stay.',
      handler: async ({ caller, params, query }) => {
        await sources.remove(caller.orgId, params.sourceId, query.force);
        return { status: 204 };
      },
    }),
    {
      method: 'GET', path: '/ingestion/sources/:sourceId/references', auth: 'key', summary: 'What uses a source', responses: { 200: I.References },
      handler: async ({ caller, params }) => json(200, await sources.references(caller.orgId, params.sourceId)),
    },
    route({
      method: 'POST', path: '/ingestion/sources/:sourceId/upload/init', auth: 'key', summary: 'Upload files to a file_upload source: one presigned URL per file',
      body: I.SourceUploadInit, responses: { 200: I.SourceUploadInitAnswer },
      description: 'Creates the ingestion job that will load the files into dataset_id. PUT each file to its upload_url with its Content-Type (no API key), then upload/complete.',
      handler: async ({ req, caller, params, body }) => json(200, await ingest.initUpload(caller.orgId, params.sourceId, body.dataset_id, body.files, uploadBase(req))),
    }),
    route({
      method: 'POST', path: '/ingestion/sources/:sourceId/upload/complete', auth: 'key', summary: 'Confirm uploaded files; the job ingests them',
      body: S.UploadComplete, responses: { 200: I.SourceUploadCompleteAnswer },
      handler: async ({ caller, params, body }) => json(200, await ingest.completeUpload(caller.orgId, params.sourceId, body.job_id, body.file_ids)),
    }),
  ];
}

/** The config schema of every type, for the OpenAPI document's components. */
export function sourceConfigComponents(): Record<string, unknown> {
  return Object.fromEntries(SOURCE_TYPES.map((t) => [`SourceConfig_${t}`, SOURCE_CONFIGS[t]]));
}
