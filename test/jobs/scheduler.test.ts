// Cron in a time zone: next occurrences (across a daylight-saving change), validation messages,
// and the ticker: due schedules fire once each, a missed run fires once, and two schedulers on
// one store never both fire an occurrence.
import { describe, expect, it } from 'vitest';
import { checkSchedule, nextRunAt, Scheduler, type Scheduled, type ScheduleStore } from '../../dist/jobs/scheduler.js';

/** A store of schedules in memory: the interface's contract, for the ticker alone. */
class MemoryStore implements ScheduleStore {
  constructor(readonly items: (Scheduled & { enabled: boolean; last_run_at: string | null })[]) {}
  async due(now: Date) {
    return this.items.filter((s) => s.enabled && s.next_run_at !== null && s.next_run_at <= now.toISOString()).map((s) => ({ ...s }));
  }
  async fired(id: string, expected: string, firedAt: string, next: string | null) {
    const s = this.items.find((x) => x.id === id)!;
    if (!s.enabled || s.next_run_at !== expected) return false;
    Object.assign(s, { last_run_at: firedAt, next_run_at: next });
    return true;
  }
}

describe('schedules', () => {
  it('computes the next run in the schedule time zone', () => {
    expect(nextRunAt('0 9 * * 1-5', 'Europe/Paris', new Date('2026-11-24T10:00:00Z'))).toBe('2026-11-25T08:00:00.000Z');
    expect(nextRunAt('0 9 * * 1-5', 'America/New_York', new Date('2026-11-24T10:00:00Z'))).toBe('2026-11-24T14:00:00.000Z');
    // 02:30 does not exist in Berlin on 2026-03-29 (02:00 -> 03:00): it fires once, at 03:00 local.
    expect(nextRunAt('30 2 * * *', 'Europe/Berlin', new Date('2026-03-28T12:00:00Z'))).toBe('2026-03-29T01:00:00.000Z');
    expect(nextRunAt('*/15 * * * *', 'UTC', new Date('2026-01-01T00:07:00Z'))).toBe('2026-01-01T00:15:00.000Z');
  });

  it('refuses a bad cron or zone with a message that names it', () => {
    expect(() => checkSchedule('61 * * * *', 'UTC')).toThrow(/cron '61 \* \* \* \*' is not valid/);
    expect(() => checkSchedule('0 * * * *', 'Mars/Olympus')).toThrow(/timezone 'Mars\/Olympus' is not an IANA time zone/);
    expect(() => checkSchedule('0 * * * *', 'Asia/Tokyo')).not.toThrow();
  });

  it('fires each due schedule once per occurrence, a missed one once, never twice across schedulers', async () => {
    const store = new MemoryStore([
      { id: 'hourly', cron: '0 * * * *', timezone: 'UTC', next_run_at: '2026-01-01T10:00:00.000Z', enabled: true, last_run_at: null },
      { id: 'off', cron: '0 * * * *', timezone: 'UTC', next_run_at: '2026-01-01T10:00:00.000Z', enabled: false, last_run_at: null },
      { id: 'later', cron: '0 0 * * *', timezone: 'UTC', next_run_at: '2026-01-02T00:00:00.000Z', enabled: true, last_run_at: null },
    ]);
    const fired: string[] = [];
    const a = new Scheduler(store, async (s) => void fired.push(s.id));
    const b = new Scheduler(store, async (s) => void fired.push(s.id));
    // The service was down from 10:00 to 13:20: the hourly schedule fires once, then resumes hourly.
    const now = new Date('2026-01-01T13:20:00Z');
    await Promise.all([a.tick(now), b.tick(now)]);
    expect(fired).toEqual(['hourly']);
    expect(store.items[0]).toMatchObject({ last_run_at: now.toISOString(), next_run_at: '2026-01-01T14:00:00.000Z' });
    await a.tick(new Date('2026-01-01T13:59:59Z'));
    expect(fired).toEqual(['hourly']);
    await a.tick(new Date('2026-01-01T14:00:00Z'));
    expect(fired).toEqual(['hourly', 'hourly']);
  });
});
