/** Job routes: list, get (also at the bulk upload's status_url), files, statistics, retry. */
import { Type } from '@sinclair/typebox';
import { SableError } from '../../errors/codes.js';
import type { JobQueue } from '../../jobs/queue.js';
import { StringEnum } from '../../contract/json-schema.js';
import { FILE_STATUSES, publicFile, publicJob, statisticsOf, type FileStatus, type JobRecord } from '../../jobs/records.js';
import type { JobRunner } from '../../jobs/runner.js';
import { OffsetPaging } from '../../contract/common.js';
import type { IngestJobs } from '../../ingest/jobs.js';
import * as I from '../../ingest/requests.js';
import { route, type Route } from '../http/router.js';
import { json } from '../http/types.js';
import * as S from '../schemas/jobs.js';

export function jobRoutes(jobs: JobQueue, runner: JobRunner, ingest: IngestJobs): Route[] {
  const owned = async (orgId: string, id: string): Promise<JobRecord> => {
    const j = await jobs.get(id);
    if (!j || j.org_id !== orgId) throw new SableError('job_not_found', `job ${id} was not found`);
    return j;
  };
  const getJob: Route['handler'] = async ({ caller, params }) => json(200, publicJob(await owned(caller.orgId, params.jobId)));
  return [
    route({
      method: 'GET', path: '/ingestion/jobs', auth: 'key', summary: 'List jobs, newest first', responses: { 200: S.JobList },
      query: Type.Composite([OffsetPaging, Type.Object({ dataset_id: Type.Optional(Type.String({ description: "only this dataset's jobs" })) })]),
      description: 'Answers {jobs, total, limit, offset}.',
      handler: async ({ caller, query: { limit, offset, dataset_id } }) => {
        const page = await jobs.list({ orgId: caller.orgId, datasetId: dataset_id }, limit, offset);
        return json(200, { jobs: page.jobs.map(publicJob), total: page.total, limit, offset });
      },
    }),
    route({
      method: 'POST', path: '/ingestion/jobs', auth: 'key', summary: 'Ingest a source into a dataset', body: I.JobCreate, responses: { 201: S.Job },
      description:
        'Answers 201 with the queued job. The job lists the source anew (a file_upload source: the latest upload of each ' +
        'file name) and ingests every item; with sync_mode incremental, unchanged documents are skipped and documents the ' +
        'source no longer holds are removed (withheld when more than 10 and over 20% of the source\'s would go).',
      handler: async ({ caller, body }) => json(201, publicJob(await ingest.start(caller.orgId, body.source_id, body.dataset_id))),
    }),
    { method: 'GET', path: '/ingestion/jobs/:jobId', auth: 'key', summary: 'Get a job', responses: { 200: S.Job }, handler: getJob },
    { method: 'GET', path: '/v1/jobs/:jobId', auth: 'key', summary: 'Get a job (the status_url of a bulk upload)', responses: { 200: S.Job }, handler: getJob },
    route({
      method: 'GET', path: '/ingestion/jobs/:jobId/files', auth: 'key', summary: "List a job's files", responses: { 200: S.JobFiles },
      query: Type.Composite([OffsetPaging, Type.Object({ status: Type.Optional(StringEnum(FILE_STATUSES, { description: 'only files in this status' })) })]),
      description: 'Answers {files, total, limit, offset, counts}.',
      handler: async ({ caller, params, query: { limit, offset, status } }) => {
        const job = await owned(caller.orgId, params.jobId);
        const all = await jobs.files(job.job_id);
        const counts = Object.fromEntries(FILE_STATUSES.map((s) => [s, all.filter((f) => f.status === s).length]));
        const chosen = status === undefined ? all : all.filter((f) => f.status === (status as FileStatus));
        return json(200, { files: chosen.slice(offset, offset + limit).map(publicFile), total: chosen.length, limit, offset, counts });
      },
    }),
    {
      method: 'GET', path: '/ingestion/jobs/:jobId/statistics', auth: 'key', summary: "A job's statistics (null until a file has finished)",
      responses: { 200: S.JobStatistics },
      handler: async ({ caller, params }) => {
        const job = await owned(caller.orgId, params.jobId);
        return json(200, statisticsOf(job, await jobs.files(job.job_id)));
      },
    },
    {
      method: 'POST', path: '/ingestion/jobs/:jobId/retry', auth: 'key', summary: 'Rerun a failed or cancelled job in full', responses: { 200: S.Job },
      description:
        'Allowed for failed or cancelled jobs and for jobs whose every file failed; creates and returns a fresh job ' +
        'over the same uploaded files. A completed job answers 400 job_not_retryable, as does one still running.',
      handler: async ({ caller, params }) => json(200, publicJob(await runner.retry(await owned(caller.orgId, params.jobId)))),
    },
  ];
}
