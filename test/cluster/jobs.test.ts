// The job queue and the cron schedules of cluster mode on a real PostgreSQL
// (testkit/postgres.ts): SKIP LOCKED claims, fenced leases, the reaper, cancel, and exactly
// one job per schedule tick across concurrent tickers (design: ../shared/design/cluster.md §3.6).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Cron } from 'croner';
import { cancelled, claim, complete, enqueue, fail, heartbeat, reap, requestCancel } from '../../dist/cluster/job-queue.js';
import { putSchedule, tick } from '../../dist/cluster/schedule-ticks.js';
import { migrate } from '../../dist/outbound/postgres/migrations.js';
import { openPool, type Pool } from '../../dist/outbound/postgres/pool.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';

let server: LocalPostgres;
let pool: Pool;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = await startPostgres();
  pool = openPool(server.url, { max: 10 });
  await migrate(pool);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

beforeEach(async () => {
  await pool.query('DELETE FROM cluster_jobs');
  await pool.query('DELETE FROM cluster_schedules');
});

const job = async (id: string) => (await pool.query('SELECT * FROM cluster_jobs WHERE id = $1', [id])).rows[0];

describe('job queue', () => {
  it('4 concurrent claimers claim each of 20 jobs exactly once', async () => {
    for (let i = 0; i < 20; i++) await enqueue(pool, { id: `j${String(i).padStart(2, '0')}`, kind: 'ingest', payload: { i } });
    const claimed = await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        const mine: string[] = [];
        for (let n = 0; n < 50; n++) {
          const c = await claim(pool, `w${w}`, 10_000);
          if (!c) break;
          expect(c).toMatchObject({ fence: 1, attempt: 1, kind: 'ingest' });
          mine.push(c.id);
        }
        return mine;
      }),
    );
    const all = claimed.flat().sort();
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => `j${String(i).padStart(2, '0')}`));
    expect(claimed.filter((m) => m.length > 0).length).toBeGreaterThan(1); // they did run concurrently
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM cluster_jobs WHERE status = 'running' AND fence = 1`);
    expect(rows[0].n).toBe(20);
  });

  it('claims by priority then age, and not before run_at', async () => {
    await enqueue(pool, { id: 'later', kind: 'k', runAt: new Date(Date.now() + 60_000) });
    await enqueue(pool, { id: 'low', kind: 'k', priority: 5 });
    await enqueue(pool, { id: 'high', kind: 'k', priority: 1 });
    expect((await claim(pool, 'w', 1000))?.id).toBe('high');
    expect((await claim(pool, 'w', 1000))?.id).toBe('low');
    expect(await claim(pool, 'w', 1000)).toBeNull();
  });

  it('a worker that stops heartbeating loses its job to the reaper; its stale writes change nothing', async () => {
    await enqueue(pool, { id: 'a', kind: 'k', payload: { x: 1 } });
    const first = (await claim(pool, 'old', 300))!;
    expect(first).toEqual({ id: 'a', fence: 1, attempt: 1, kind: 'k', payload: { x: 1 } });
    expect(await heartbeat(pool, 'a', first.fence, 300)).toEqual({ alive: true, cancelRequested: false });
    expect(await reap(pool)).toEqual({ requeued: 0, failed: 0, cancelled: 0 }); // lease still live
    await sleep(400); // the old worker is "paused" past its lease
    expect(await reap(pool)).toEqual({ requeued: 1, failed: 0, cancelled: 0 });
    expect((await job('a')).status).toBe('queued');

    const second = (await claim(pool, 'new', 10_000))!;
    expect(second).toMatchObject({ id: 'a', fence: first.fence + 1, attempt: 2 });
    // The old worker wakes up: its heartbeat reports the lease lost, its writes are refused.
    expect(await heartbeat(pool, 'a', first.fence, 300)).toEqual({ alive: false, cancelRequested: false });
    expect(await complete(pool, 'a', first.fence, { by: 'old' })).toBe(false);
    expect(await fail(pool, 'a', first.fence, 'late')).toBe(false);
    expect(await job('a')).toMatchObject({ status: 'running', lease_owner: 'new', fence: '2', result: null, error: null });

    expect(await complete(pool, 'a', second.fence, { by: 'new' })).toBe(true);
    expect(await job('a')).toMatchObject({ status: 'succeeded', result: { by: 'new' } });
    expect(await complete(pool, 'a', second.fence, { again: true })).toBe(false); // ended once
  });

  it('a stale write after the reaper re-queued (not yet re-claimed) changes nothing', async () => {
    await enqueue(pool, { id: 'b', kind: 'k' });
    const c = (await claim(pool, 'old', 100))!;
    await sleep(200);
    expect((await reap(pool)).requeued).toBe(1);
    expect(await complete(pool, 'b', c.fence, 'late')).toBe(false);
    expect((await job('b')).status).toBe('queued');
  });

  it('cancel: a running job sees it through heartbeat; a queued one is cancelled at once', async () => {
    await enqueue(pool, { id: 'run', kind: 'k' });
    const c = (await claim(pool, 'w', 10_000))!;
    await enqueue(pool, { id: 'wait', kind: 'k' });
    expect(await requestCancel(pool, 'run')).toBe('running');
    expect(await requestCancel(pool, 'wait')).toBe('cancelled');
    expect(await claim(pool, 'w', 10_000)).toBeNull(); // 'wait' is not claimable
    expect(await heartbeat(pool, 'run', c.fence, 10_000)).toEqual({ alive: true, cancelRequested: true });
    expect(await cancelled(pool, 'run', c.fence)).toBe(true);
    expect((await job('run')).status).toBe('cancelled');
    expect(await requestCancel(pool, 'run')).toBeNull(); // ended already

    // A cancel requested of a worker that died: the reaper ends the job cancelled, not re-queued.
    await enqueue(pool, { id: 'dead', kind: 'k' });
    await claim(pool, 'w', 100);
    await requestCancel(pool, 'dead');
    await sleep(200);
    expect(await reap(pool)).toEqual({ requeued: 0, failed: 0, cancelled: 1 });
    expect((await job('dead')).status).toBe('cancelled');
  });

  it('a job whose every attempt loses its lease ends failed after max_attempts', async () => {
    await enqueue(pool, { id: 'doomed', kind: 'k', maxAttempts: 2 });
    for (let attempt = 1; attempt <= 2; attempt++) {
      const c = (await claim(pool, `w${attempt}`, 100))!;
      expect(c).toMatchObject({ id: 'doomed', attempt, fence: attempt });
      await sleep(200);
      expect(await reap(pool)).toEqual(attempt < 2 ? { requeued: 1, failed: 0, cancelled: 0 } : { requeued: 0, failed: 1, cancelled: 0 });
    }
    expect(await job('doomed')).toMatchObject({ status: 'failed', attempt: 2, error: 'the lease of attempt 2 of 2 expired (its worker stopped heartbeating)' });
    expect(await claim(pool, 'w', 100)).toBeNull();
  });
});

describe('schedules', () => {
  it('6 concurrent tickers over ~1.5 s on 3 every-second schedules: exactly one job per (schedule, tick), no duplicates', async () => {
    for (const id of ['s1', 's2', 's3']) await putSchedule(pool, { id, cron: '* * * * * *', kind: 'sync', payload: { id } });
    const TICKERS = 6;
    const stopAt = Date.now() + 1500;
    const fired = await Promise.all(
      Array.from({ length: TICKERS }, async () => {
        let enqueued = 0;
        for (let n = 0; n < 500 && Date.now() < stopAt; n++) {
          enqueued += (await tick(pool)).enqueued;
          await sleep(10 + Math.random() * 20);
        }
        return enqueued;
      }),
    );
    const { rows } = await pool.query<{ schedule_id: string; scheduled_for: Date; kind: string; trigger: string; payload: unknown }>(
      `SELECT schedule_id, scheduled_for, kind, trigger, payload FROM cluster_jobs ORDER BY schedule_id, scheduled_for`,
    );
    expect(fired.reduce((a, b) => a + b, 0)).toBe(rows.length);
    const keys = rows.map((r) => `${r.schedule_id}@${r.scheduled_for.toISOString()}`);
    expect(new Set(keys).size).toBe(keys.length); // no duplicates
    for (const id of ['s1', 's2', 's3']) {
      const times = rows.filter((r) => r.schedule_id === id).map((r) => r.scheduled_for.getTime());
      expect(times.length).toBeGreaterThanOrEqual(1);
      // whole seconds, strictly increasing: no tick fired twice (consecutive unless a stall of
      // every ticker over a whole second made the next tick coalesce)
      times.forEach((t, i) => {
        expect(t % 1000).toBe(0);
        if (i > 0) expect(t - times[i - 1]).toBeGreaterThanOrEqual(1000);
      });
    }
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows[0]).toMatchObject({ kind: 'sync', trigger: 'schedule', payload: { id: 's1' } });
  });

  it('a schedule missed for several ticks gets one job (coalesced), then continues from the present', async () => {
    await putSchedule(pool, { id: 'daily', cron: '0 9 * * *', timeZone: 'America/New_York', kind: 'sync' });
    const { rows: before } = await pool.query(`SELECT next_run_at FROM cluster_schedules WHERE id = 'daily'`);
    const expected = new Cron('0 9 * * *', { timezone: 'America/New_York', paused: true }).nextRun(new Date())!;
    expect(before[0].next_run_at.getTime()).toBe(expected.getTime());
    const hourInNewYork = (d: Date) => new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', hour: 'numeric', hourCycle: 'h23' }).format(d).replace(/^0/, '');
    expect(hourInNewYork(before[0].next_run_at)).toBe('9');

    // All nodes were down for 5 days: 5 occurrences missed.
    const missed = new Date(expected.getTime() - 5 * 86_400_000);
    await pool.query(`UPDATE cluster_schedules SET next_run_at = $1 WHERE id = 'daily'`, [missed]);
    expect(await tick(pool)).toEqual({ due: 1, enqueued: 1, broken: [] });
    expect(await tick(pool)).toEqual({ due: 0, enqueued: 0, broken: [] });
    const { rows: jobs } = await pool.query(`SELECT scheduled_for FROM cluster_jobs WHERE schedule_id = 'daily'`);
    expect(jobs.map((j) => j.scheduled_for.getTime())).toEqual([missed.getTime()]);
    const { rows: after } = await pool.query(`SELECT next_run_at, now() AS now FROM cluster_schedules WHERE id = 'daily'`);
    expect(after[0].next_run_at.getTime()).toBeGreaterThan(after[0].now.getTime());
    expect(hourInNewYork(after[0].next_run_at)).toBe('9');
  });

  it('disabled schedules do not fire; a broken cron is parked (next_run_at NULL) instead of blocking others', async () => {
    await putSchedule(pool, { id: 'off', cron: '* * * * * *', kind: 'k', enabled: false });
    await pool.query(`INSERT INTO cluster_schedules (id, cron, time_zone, next_run_at, kind) VALUES ('bad', 'not a cron', 'UTC', now() - interval '1 s', 'k')`);
    await sleep(1100);
    expect(await tick(pool)).toEqual({ due: 1, enqueued: 0, broken: ['bad'] });
    const { rows } = await pool.query(`SELECT next_run_at FROM cluster_schedules WHERE id = 'bad'`);
    expect(rows[0].next_run_at).toBeNull();
  });
});
