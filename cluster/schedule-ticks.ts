/**
 * Cron schedules across nodes, exactly one job per tick (design: ../shared/design/cluster.md §3.6),
 * on `cluster_schedules` and `cluster_jobs` of migration 0002: the design's SQL, tested alone. The
 * service's schedules stay in the replicated catalog; what makes one job per tick there is the
 * same key, UNIQUE (schedule_id, scheduled_for) on `job_records` (migration 0008), with the tick's
 * job made before the schedule moves on (jobs/scheduler.ts `fireFirst`). Every worker calls `tick` every
 * 1-5 s; any number may tick at once.
 *
 * One transaction per tick: the due schedules (enabled, next_run_at <= now) are selected
 * `FOR UPDATE SKIP LOCKED LIMIT 50` (another ticker's rows are skipped, not waited for); one job
 * per due schedule is inserted with `scheduled_for = next_run_at`, `ON CONFLICT (schedule_id,
 * scheduled_for) DO NOTHING`; and next_run_at moves to the schedule's next cron time after now.
 * This is the design's CTE split into statements of one transaction, because the next time is
 * computed in JS by croner in the schedule's time zone (as the embedded scheduler,
 * jobs/scheduler.ts, computes it), not by SQL. UNIQUE (schedule_id, scheduled_for) is what makes
 * a tick's job unique, whatever the races, retries or restarts; the row lock only saves work.
 *
 * Missed ticks are coalesced: a schedule whose next_run_at is several occurrences in the past
 * (all nodes were down) gets ONE job, for the oldest missed time (its stored next_run_at), and
 * then continues from the present (the next occurrence after now); there is no backlog.
 */
import { Cron } from 'croner';
import type { Pool } from '../outbound/postgres/pool.js';
import { withTransaction } from '../outbound/postgres/pool.js';

export interface NewSchedule {
  id: string;
  /** croner syntax: 5 fields, or 6 with seconds first. */
  cron: string;
  /** IANA zone (default UTC). */
  timeZone?: string;
  enabled?: boolean;
  kind: string;
  payload?: unknown;
}

export interface TickResult {
  /** Due schedules this ticker took (locked). */
  due: number;
  /** Jobs it inserted (a tick already fired elsewhere inserts none). */
  enqueued: number;
  /** Schedules whose cron or zone croner refuses: their next_run_at is set to NULL (no job). */
  broken: string[];
}

/** How many due schedules one tick takes. */
const BATCH = 50;

/** The first occurrence strictly after `after` in `timeZone`, or null when there is none. Throws on a bad cron or zone. */
export function nextCronTime(cron: string, timeZone: string, after: Date): Date | null {
  return new Cron(cron, { timezone: timeZone, paused: true }).nextRun(after) ?? null;
}

/** Inserts (or replaces) a schedule, its next_run_at the first occurrence after `now` (default: the database's now). */
export async function putSchedule(pool: Pool, s: NewSchedule, now?: Date): Promise<Date | null> {
  const timeZone = s.timeZone ?? 'UTC';
  const at = now ?? (await dbNow(pool));
  const next = nextCronTime(s.cron, timeZone, at);
  await pool.query(
    `INSERT INTO cluster_schedules (id, cron, time_zone, enabled, next_run_at, kind, payload)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO UPDATE SET cron = EXCLUDED.cron, time_zone = EXCLUDED.time_zone, enabled = EXCLUDED.enabled,
       next_run_at = EXCLUDED.next_run_at, kind = EXCLUDED.kind, payload = EXCLUDED.payload`,
    [s.id, s.cron, timeZone, s.enabled ?? true, next, s.kind, JSON.stringify(s.payload ?? {})],
  );
  return next;
}

/**
 * Fires the due schedules once (see the module comment). `now` defaults to the database's clock
 * (now() of the tick's transaction), which decides both what is due and where next runs start.
 */
export async function tick(pool: Pool, now?: Date): Promise<TickResult> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; cron: string; time_zone: string; at: Date }>(
      `SELECT id, cron, time_zone, COALESCE($1::timestamptz, now()) AS at FROM cluster_schedules
        WHERE enabled AND next_run_at <= COALESCE($1::timestamptz, now())
        ORDER BY id FOR UPDATE SKIP LOCKED LIMIT ${BATCH}`,
      [now ?? null],
    );
    if (rows.length === 0) return { due: 0, enqueued: 0, broken: [] };
    const ids: string[] = [];
    const nexts: (Date | null)[] = [];
    const broken: string[] = [];
    for (const r of rows) {
      let next: Date | null;
      try {
        next = nextCronTime(r.cron, r.time_zone, r.at);
      } catch {
        broken.push(r.id);
        next = null;
      }
      ids.push(r.id);
      nexts.push(next);
    }
    const fire = ids.filter((id) => !broken.includes(id));
    const ins = await client.query(
      `INSERT INTO cluster_jobs (id, kind, payload, trigger, schedule_id, scheduled_for)
       SELECT gen_random_uuid()::text, s.kind, s.payload, 'schedule', s.id, s.next_run_at
         FROM cluster_schedules s WHERE s.id = ANY($1::text[])
       ON CONFLICT (schedule_id, scheduled_for) DO NOTHING`,
      [fire],
    );
    await client.query(
      `UPDATE cluster_schedules s SET next_run_at = v.next
         FROM unnest($1::text[], $2::timestamptz[]) AS v(id, next) WHERE s.id = v.id`,
      [ids, nexts],
    );
    return { due: rows.length, enqueued: ins.rowCount ?? 0, broken };
  });
}

async function dbNow(pool: Pool): Promise<Date> {
  const { rows } = await pool.query<{ now: Date }>('SELECT now() AS now');
  return rows[0].now;
}
