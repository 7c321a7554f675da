/** Schedule routes: CRUD and trigger. */
import type { JobQueue } from '../../jobs/queue.js';
import { publicJob } from '../../jobs/records.js';
import * as I from '../../ingest/requests.js';
import type { ScheduleService } from '../../ingest/schedules/service.js';
import { OffsetPaging } from '../../contract/common.js';
import { route, type Route } from '../http/router.js';
import { json } from '../http/types.js';
import * as S from '../schemas/jobs.js';

export function scheduleRoutes(schedules: ScheduleService, jobs: JobQueue): Route[] {
  return [
    route({
      method: 'GET', path: '/ingestion/schedules', auth: 'key', summary: 'List schedules', query: OffsetPaging, responses: { 200: I.ScheduleList },
      handler: async ({ caller, query: { limit, offset } }) => json(200, { ...schedules.list(caller.orgId, limit, offset), limit, offset }),
    }),
    route({
      method: 'POST', path: '/ingestion/schedules', auth: 'key', summary: 'Create a schedule: a source read into a dataset on a cron', body: I.ScheduleCreate,
      responses: { 201: I.Schedule },
      description:
        'cron is evaluated in timezone (IANA, default UTC), daylight-saving changes included: a time the clocks skip runs once, ' +
        'at the first time after the gap. next_run_at is null while disabled. A schedule never runs twice at once: a firing ' +
        'while its last run is in flight is skipped. name defaults to "<source> into <dataset> (<cron>, <timezone>)".',
      handler: async ({ caller, body }) => json(201, schedules.view(await schedules.create(caller.orgId, body))),
    }),
    {
      method: 'GET', path: '/ingestion/schedules/:scheduleId', auth: 'key', summary: 'Get a schedule', responses: { 200: I.Schedule },
      handler: async ({ caller, params }) => json(200, schedules.view(schedules.get(caller.orgId, params.scheduleId))),
    },
    route({
      method: 'PATCH', path: '/ingestion/schedules/:scheduleId', auth: 'key', summary: 'Change a schedule', body: I.SchedulePatch, responses: { 200: I.Schedule },
      handler: async ({ caller, params, body }) => json(200, schedules.view(await schedules.update(caller.orgId, params.scheduleId, body))),
    }),
    {
      method: 'DELETE', path: '/ingestion/schedules/:scheduleId', auth: 'key', summary: 'Delete a schedule (jobs it started go on)', responses: { 204: null },
      handler: async ({ caller, params }) => {
        await schedules.remove(caller.orgId, params.scheduleId);
        return { status: 204 };
      },
    },
    {
      method: 'POST', path: '/ingestion/schedules/:scheduleId/trigger', auth: 'key', summary: 'Run a schedule now, whatever its cron', responses: { 201: S.Job },
      description: 'Answers 201 with the job it started; 409 schedule_busy (with job_id) while its last run is in flight.',
      handler: async ({ caller, params }) => {
        const job = await schedules.trigger(caller.orgId, params.scheduleId);
        return json(201, publicJob((await jobs.get(job.job_id)) ?? job));
      },
    },
  ];
}
