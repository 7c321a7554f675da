/**
 * Schedules: a source read into a dataset on a cron in an IANA time zone. A run is an ingest job;
 * a schedule never has two at once (a firing while its last run is in flight is skipped, a
 * trigger then answers 409 schedule_busy). `resume_state` is handed to each run and kept after it.
 * Times come from an injectable clock, so daylight-saving changes are testable.
 */
import { randomUUID } from 'node:crypto';
import type { DatasetService } from '../../catalog/datasets/service.js';
import { SableError } from '../../errors/codes.js';
import type { JobQueue } from '../../jobs/queue.js';
import { isActive, type JobRecord } from '../../jobs/records.js';
import { checkSchedule, nextRunAt, type Scheduled } from '../../jobs/scheduler.js';
import type { IngestJobs } from '../jobs.js';
import type { ScheduleCreate, SchedulePatch } from '../requests.js';
import type { SourceService } from '../sources/service.js';
import type { ScheduleRecord, ScheduleRecords } from './store.js';


export interface ScheduleCounters {
  fired: number;
  /** Firings skipped because the schedule's last run was still in flight. */
  skippedBusy: number;
}

export class ScheduleService {
  readonly counters: ScheduleCounters = { fired: 0, skippedBusy: 0 };

  constructor(
    private readonly store: ScheduleRecords,
    private readonly jobs: JobQueue,
    private readonly ingest: IngestJobs,
    private readonly sources: SourceService,
    private readonly datasets: DatasetService,
    private readonly now: () => Date = () => new Date(),
  ) {}

  list(orgId: string, limit: number, offset: number) {
    const all = this.store.ofOrg(orgId);
    return { schedules: all.slice(offset, offset + limit).map(view), total: all.length };
  }

  get(orgId: string, id: string): ScheduleRecord {
    const s = this.store.get(id);
    if (!s || s.org_id !== orgId) throw new SableError('schedule_not_found', `schedule ${id} was not found`);
    return s;
  }

  view(s: ScheduleRecord) {
    return view(s);
  }

  async create(orgId: string, b: ScheduleCreate): Promise<ScheduleRecord> {
    const source = this.sources.get(orgId, b.source_id);
    const dataset = this.datasets.get(orgId, b.dataset_id);
    const timezone = b.timezone ?? 'UTC';
    checkSchedule(b.cron, timezone);
    const enabled = b.enabled ?? true;
    const now = this.now().toISOString();
    const s: ScheduleRecord = {
      id: randomUUID(),
      org_id: orgId,
      source_id: source.id,
      dataset_id: dataset.id,
      pipeline_id: b.pipeline_id ?? null,
      name: b.name ?? `${source.name} into ${dataset.name} (${b.cron}, ${timezone})`,
      cron: b.cron,
      timezone,
      enabled,
      next_run_at: enabled ? nextRunAt(b.cron, timezone, this.now()) : null,
      last_run_at: null,
      resume_state: b.resume_state ?? {},
      metadata: b.metadata ?? {},
      active_job_id: null,
      created_at: now,
      updated_at: now,
    };
    await this.store.put(s);
    return s;
  }

  async update(orgId: string, id: string, p: SchedulePatch): Promise<ScheduleRecord> {
    const cur = this.get(orgId, id);
    const cron = p.cron ?? cur.cron;
    const timezone = p.timezone ?? cur.timezone;
    checkSchedule(cron, timezone);
    const next = await this.store.update(id, (s) => {
      const enabled = p.enabled ?? s.enabled;
      const timing = p.cron !== undefined || p.timezone !== undefined || (enabled && !s.enabled);
      // Field by field: the body spread into the record could set its org_id.
      return {
        ...s,
        name: p.name ?? s.name,
        metadata: p.metadata ?? s.metadata,
        resume_state: p.resume_state ?? s.resume_state,
        cron,
        timezone,
        enabled,
        next_run_at: !enabled ? null : timing || s.next_run_at === null ? nextRunAt(cron, timezone, this.now()) : s.next_run_at,
      };
    });
    if (!next) throw new SableError('schedule_not_found', `schedule ${id} was not found`);
    return next;
  }

  async remove(orgId: string, id: string): Promise<void> {
    this.get(orgId, id);
    await this.store.remove(id);
  }

  /** Runs the schedule now, whatever its cron (409 schedule_busy while its last run is in flight). */
  async trigger(orgId: string, id: string): Promise<JobRecord> {
    const s = this.get(orgId, id);
    const busy = await this.busy(s);
    if (busy) throw new SableError('schedule_busy', `schedule ${id} is running job ${busy.job_id}; a schedule runs once at a time`, { fields: { job_id: busy.job_id } });
    return this.start(s);
  }

  /** The scheduler's callback: a due schedule starts a run unless its last one is in flight. */
  async fire(due: Scheduled): Promise<void> {
    const s = this.store.get(due.id);
    if (!s || !s.enabled) return;
    if (await this.busy(s)) {
      this.counters.skippedBusy++;
      return;
    }
    await this.start(s);
  }

  private async start(s: ScheduleRecord): Promise<JobRecord> {
    const job = await this.ingest.start(s.org_id, s.source_id, s.dataset_id, s.id);
    await this.store.update(s.id, (x) => ({ ...x, active_job_id: job.job_id, last_run_at: this.now().toISOString() }));
    this.counters.fired++;
    return job;
  }

  /**
   * The schedule's run in flight, if any: the one it recorded, else an active job it started. Its
   * record is written after the job is made, so a process killed between the two (a cluster
   * node, whose tick's job another node then finds made) leaves a run the record does not name.
   */
  private async busy(s: ScheduleRecord): Promise<JobRecord | null> {
    const recorded = s.active_job_id ? await this.jobs.get(s.active_job_id) : undefined;
    if (recorded && isActive(recorded)) return recorded;
    return (await this.jobs.activeOfSource(s.source_id)).find((j) => j.schedule_id === s.id) ?? null;
  }
}

function view(s: ScheduleRecord) {
  return {
    id: s.id,
    org_id: s.org_id,
    source_id: s.source_id,
    dataset_id: s.dataset_id,
    pipeline_id: s.pipeline_id,
    name: s.name,
    cron: s.cron,
    timezone: s.timezone,
    enabled: s.enabled,
    next_run_at: s.next_run_at,
    last_run_at: s.last_run_at,
    resume_state: s.resume_state,
    metadata: s.metadata,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}
