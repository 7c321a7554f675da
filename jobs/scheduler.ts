/**
 * Cron schedules in a time zone: when each is next due, and a ticker that fires the due ones.
 * What a schedule starts (an ingestion job) is the caller's; this only knows cron, zones and
 * time. Firing is a compare-and-set on the stored next run, so two processes on one store never
 * both fire one occurrence; runs missed while the service was down fire once at the next tick,
 * then the schedule continues from the present (no backlog of missed runs).
 *
 * Where the job queue keys a schedule's jobs by tick (a cluster's: UNIQUE (schedule_id,
 * scheduled_for), cluster/pg-job-queue.ts), the order is the other way round (`fireFirst`): the
 * tick's job is made first, inside the tick's context (jobs/attempts.ts), and the schedule moves
 * on after. A node killed between the two leaves the tick due; the next ticker (any node) makes
 * its job or finds it made (TickTaken), then moves the schedule on: exactly one job per tick
 * that fired. The compare-and-set first would lose the tick instead (moved on, no job). Without
 * such a key (one machine's LMDB queue) the compare-and-set stays first: two processes on one
 * store would both make the job.
 *
 * A spring-forward gap time (02:30 on the night clocks skip 02:00-03:00) fires once, shifted
 * to 03:00; an autumn-repeated hour fires once (croner's rules).
 */
import { Cron } from 'croner';
import { badRequest } from '../errors/codes.js';
import { atTick, TickTaken } from './attempts.js';

export interface Scheduled {
  id: string;
  cron: string;
  timezone: string;
  /** ISO 8601; null when the cron has no future occurrence. */
  next_run_at: string | null;
}

export interface ScheduleStore {
  /** Enabled schedules whose next run is at or before `now`. */
  due(now: Date): Promise<Scheduled[]>;
  /**
   * Records a firing: succeeds only while the schedule's next run still equals `expected` (no
   * other process fired it) and it is still enabled; then its last run is `firedAt` and its next
   * run `next`.
   */
  fired(id: string, expected: string, firedAt: string, next: string | null): Promise<boolean>;
}

/** Whether a string names an IANA time zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Throws invalid_request naming the problem when the cron or the zone cannot be used. */
export function checkSchedule(cron: string, timezone: string): void {
  if (!isTimeZone(timezone)) throw badRequest(`timezone '${timezone}' is not an IANA time zone (e.g. UTC, Europe/Paris, America/New_York)`);
  try {
    new Cron(cron, { timezone, paused: true });
  } catch (e) {
    throw badRequest(`cron '${cron}' is not valid: ${(e as Error).message.replace(/^CronPattern: /, '')}`);
  }
}

/** The first occurrence strictly after `after`, ISO 8601, or null when there is none. */
export function nextRunAt(cron: string, timezone: string, after: Date = new Date()): string | null {
  return new Cron(cron, { timezone, paused: true }).nextRun(after)?.toISOString() ?? null;
}

export interface SchedulerOptions {
  /** How often due schedules are looked for. */
  tickMs?: number;
  /** The clock (tests move it across a DST change). */
  now?: () => Date;
  /** The job queue keys jobs by tick: make the tick's job, then move the schedule on (see above). */
  fireFirst?: boolean;
  /** Brings the schedules up to date before each tick (a cluster node's copy of the catalog). */
  refresh?: () => Promise<void>;
}

export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private readonly tickMs: number;
  private readonly now: () => Date;
  private readonly fireFirst: boolean;
  private readonly refresh: (() => Promise<void>) | undefined;

  constructor(
    private readonly store: ScheduleStore,
    /** Starts what a schedule runs; its failure is logged and the schedule goes on. */
    private readonly fire: (schedule: Scheduled, firedAt: Date) => Promise<void>,
    opts: SchedulerOptions = {},
  ) {
    this.tickMs = opts.tickMs ?? 1000;
    this.now = opts.now ?? (() => new Date());
    this.fireFirst = opts.fireFirst ?? false;
    this.refresh = opts.refresh;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref();
    void this.tick();
  }

  /** Fires every due schedule once; resolves when they have started. */
  tick(now: Date = this.now()): Promise<void> {
    this.ticking ??= this.fireDue(now).finally(() => (this.ticking = null));
    return this.ticking;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }

  private async fireDue(now: Date): Promise<void> {
    let due: Scheduled[];
    try {
      await this.refresh?.();
      due = await this.store.due(now);
    } catch (e) {
      console.error('sable: schedules could not be read:', e);
      return;
    }
    for (const s of due) {
      const next = nextRunAt(s.cron, s.timezone, now);
      if (this.fireFirst) {
        await this.fireAt(s, now);
        await this.store.fired(s.id, s.next_run_at!, now.toISOString(), next).catch((e) => console.error(`sable: schedule ${s.id} did not move on:`, e));
        continue;
      }
      if (!(await this.store.fired(s.id, s.next_run_at!, now.toISOString(), next))) continue;
      await this.fireAt(s, now);
    }
  }

  /** Starts the run of tick `s.next_run_at`, in that tick's context; a tick whose job exists already is done. */
  private async fireAt(s: Scheduled, now: Date): Promise<void> {
    try {
      await atTick({ scheduleId: s.id, tick: s.next_run_at! }, () => this.fire(s, now));
    } catch (e) {
      if (!(e instanceof TickTaken)) console.error(`sable: schedule ${s.id} did not start its run:`, e);
    }
  }
}
