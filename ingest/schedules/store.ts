/**
 * Schedules in the control store's LMDB, as the contract shows them plus the job of the run under
 * way (a schedule never runs twice at once). They are what the scheduler ticks over
 * (jobs/scheduler.ts): `due` and a compare-and-set `fired`.
 */
import type { Database } from 'lmdb';
import type { ControlStore } from '../../catalog/store.js';
import type { Scheduled, ScheduleStore } from '../../jobs/scheduler.js';

export interface ScheduleRecord {
  id: string;
  org_id: string;
  source_id: string;
  dataset_id: string;
  pipeline_id: string | null;
  name: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  next_run_at: string | null;
  last_run_at: string | null;
  resume_state: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** The job of the run under way, if any. */
  active_job_id: string | null;
  created_at: string;
  updated_at: string;
}

export class ScheduleRecords implements ScheduleStore {
  private readonly db: Database<ScheduleRecord, string>;

  constructor(private readonly store: ControlStore) {
    this.db = store.open('schedules');
  }

  get(id: string): ScheduleRecord | undefined {
    return this.db.get(id);
  }

  all(): ScheduleRecord[] {
    return [...this.db.getRange()].map((e) => e.value).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  ofOrg(orgId: string): ScheduleRecord[] {
    return this.all().filter((s) => s.org_id === orgId);
  }

  ofSource(sourceId: string): ScheduleRecord[] {
    return this.all().filter((s) => s.source_id === sourceId);
  }

  async put(s: ScheduleRecord): Promise<void> {
    await this.store.write(() => void this.db.put(s.id, s));
  }

  /** Applies `change` in one transaction; resolves with the result (undefined when gone). */
  update(id: string, change: (s: ScheduleRecord) => ScheduleRecord): Promise<ScheduleRecord | undefined> {
    return this.store.write(() => {
      const s = this.db.get(id);
      if (!s) return undefined;
      const next = { ...change(s), updated_at: new Date().toISOString() };
      this.db.put(id, next);
      return next;
    });
  }

  /** The schedules into a dataset (deleted with it). */
  async removeDataset(datasetId: string): Promise<void> {
    await this.store.write(() => {
      for (const { key, value } of this.db.getRange()) if (value.dataset_id === datasetId) this.db.remove(key);
    });
  }

  async remove(id: string): Promise<boolean> {
    return this.store.write(() => {
      if (!this.db.get(id)) return false;
      this.db.remove(id);
      return true;
    });
  }

  async due(now: Date): Promise<Scheduled[]> {
    const t = now.toISOString();
    return this.all().filter((s) => s.enabled && s.next_run_at !== null && s.next_run_at <= t);
  }

  fired(id: string, expected: string, firedAt: string, next: string | null): Promise<boolean> {
    return this.store.write(() => {
      const s = this.db.get(id);
      if (!s || !s.enabled || s.next_run_at !== expected) return false;
      this.db.put(id, { ...s, last_run_at: firedAt, next_run_at: next, updated_at: firedAt });
      return true;
    });
  }
}
