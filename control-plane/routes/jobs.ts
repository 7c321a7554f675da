/** Job routes: list, get (also at the bulk upload's status_url), files, statistics, retry. */
import { ApiError } from '../errors.js';
import type { Route } from '../http/router.js';
import { json } from '../http/types.js';
import { FILE_STATUSES, publicFile, publicJob, statisticsOf, type FileStatus, type JobRecord } from '../jobs/records.js';
import type { JobRunner } from '../jobs/runner.js';
import type { JobStore } from '../jobs/store.js';
import { pageOf } from './datasets.js';

export function jobRoutes(jobs: JobStore, runner: JobRunner): Route[] {
  const owned = (orgId: string, id: string): JobRecord => {
    const j = jobs.job(id);
    if (!j || j.org_id !== orgId) throw new ApiError('job_not_found', `job ${id} was not found`);
    return j;
  };
  const getJob: Route['handler'] = async ({ caller, params }) => json(200, publicJob(owned(caller.orgId, params.jobId)));
  return [
    {
      method: 'GET', path: '/ingestion/jobs', auth: 'key', summary: 'List jobs, newest first',
      description: 'Query dataset_id (optional), limit, offset; returns {jobs, total, limit, offset}.',
      handler: async ({ req, caller }) => {
        const { limit, offset } = pageOf(req.query);
        const datasetId = req.query.get('dataset_id');
        const all = jobs.all().filter((j) => j.org_id === caller.orgId && (datasetId === null || j.dataset_id === datasetId));
        return json(200, { jobs: all.slice(offset, offset + limit).map(publicJob), total: all.length, limit, offset });
      },
    },
    { method: 'GET', path: '/ingestion/jobs/:jobId', auth: 'key', summary: 'Get a job', handler: getJob },
    { method: 'GET', path: '/v1/jobs/:jobId', auth: 'key', summary: 'Get a job (the status_url of a bulk upload)', handler: getJob },
    {
      method: 'GET', path: '/ingestion/jobs/:jobId/files', auth: 'key', summary: "List a job's files",
      description: 'Query status (pending, processing, completed, failed, skipped), limit, offset; returns {files, total, limit, offset, counts}.',
      handler: async ({ req, caller, params }) => {
        const job = owned(caller.orgId, params.jobId);
        const { limit, offset } = pageOf(req.query);
        const status = req.query.get('status');
        if (status !== null && !FILE_STATUSES.includes(status as FileStatus)) {
          throw new ApiError('invalid_request', `status must be one of ${FILE_STATUSES.join(', ')}`);
        }
        const all = jobs.filesOf(job.job_id);
        const counts = Object.fromEntries(FILE_STATUSES.map((s) => [s, all.filter((f) => f.status === s).length]));
        const chosen = status === null ? all : all.filter((f) => f.status === status);
        return json(200, { files: chosen.slice(offset, offset + limit).map(publicFile), total: chosen.length, limit, offset, counts });
      },
    },
    {
      method: 'GET', path: '/ingestion/jobs/:jobId/statistics', auth: 'key', summary: "A job's statistics (null until a file has finished)",
      handler: async ({ caller, params }) => json(200, statisticsOf(jobs.filesOf(owned(caller.orgId, params.jobId).job_id))),
    },
    {
      method: 'POST', path: '/ingestion/jobs/:jobId/retry', auth: 'key', summary: 'Rerun a failed or cancelled job in full',
      description:
        'Allowed for failed or cancelled jobs and for jobs whose every file failed; creates and returns a fresh job ' +
        'over the same uploaded files. A completed job answers 400 job_not_retryable, as does one still running.',
      handler: async ({ caller, params }) => json(200, publicJob(await runner.retry(owned(caller.orgId, params.jobId)))),
    },
  ];
}
