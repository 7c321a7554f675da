// The service's job queue on PostgreSQL (cluster/pg-job-queue.ts), as two nodes use it: the
// JobQueue contract (records, files, idempotency keys, lists newest first, counts), claims that
// give each job to one worker however many claim at once, oldest first, leases on the database's
// clock that lapse, renew and release, a restarted node freeing what its earlier process held,
// and the job runner on two nodes running every job exactly once. Fencing: an attempt whose lease
// lapsed and whose job a newer attempt took writes nothing (LeaseLost), whatever the write; the
// runner stops such an attempt without recording anything. Ticks: one job per schedule tick.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgJobQueue } from '../../dist/cluster/pg-job-queue.js';
import { migrate } from '../../dist/outbound/postgres/migrations.js';
import { openPool, type Pool } from '../../dist/outbound/postgres/pool.js';
import { finish, newFile, newJob, queued, type JobRecord } from '../../dist/jobs/records.js';
import { JobRunner, type JobHandler } from '../../dist/jobs/runner.js';
import { asAttempt, atTick, LeaseLost, TickTaken } from '../../dist/jobs/attempts.js';
import { Scheduler, type Scheduled, type ScheduleStore } from '../../dist/jobs/scheduler.js';
import { startPostgres, type LocalPostgres } from '../../testkit/postgres.js';

let server: LocalPostgres;
let pool: Pool;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = await startPostgres();
  pool = openPool(server.url, { max: 12 });
  await migrate(pool);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

let n = 0;
function job(patch: Partial<JobRecord> = {}, confirmed = true): JobRecord {
  const j = newJob({ kind: 'parquet', orgId: 'org', datasetId: 'ds', validateOnly: false, idempotencyKey: null });
  // created_at orders lists: one millisecond apart, in creation order.
  const at = new Date(Date.UTC(2026, 10, 27, 0, 0, 0, n++)).toISOString();
  return { ...(confirmed ? queued({ ...j, created_at: at }, 0, 'queued') : { ...j, created_at: at }), ...patch };
}

describe('PgJobQueue', () => {
  it('keeps jobs, files and idempotency keys as the LMDB queue does', async () => {
    const q = new PgJobQueue(pool, 'n1');
    await q.start();
    const a = job({ org_id: 'o1', dataset_id: 'd1' });
    const b = job({ org_id: 'o1', dataset_id: 'd2', source_id: 's1' });
    const c = job({ org_id: 'o2', dataset_id: 'd1' });
    const fileOf = (id: string, position: number) => newFile({ jobId: a.job_id, fileId: id, position, name: `${id}.parquet`, key: `uploads/${id}`, size: 10, contentType: 'application/vnd.apache.parquet' });
    const files = [fileOf('f-b', 1), fileOf('f-a', 0)];
    await q.create(a, files, { orgId: 'o1', datasetId: 'd1', key: 'k1' });
    await q.create(b, []);
    await q.create(c, []);
    expect(await q.get(a.job_id)).toEqual(a);
    expect(await q.byIdempotencyKey({ orgId: 'o1', datasetId: 'd1', key: 'k1' })).toBe(a.job_id);
    expect(await q.byIdempotencyKey({ orgId: 'o2', datasetId: 'd1', key: 'k1' })).toBeUndefined();
    expect((await q.files(a.job_id)).map((f) => f.position)).toEqual([0, 1]);
    expect(await q.file(a.job_id, files[0]!.uuid)).toEqual(files[0]);
    const page = await q.list({ orgId: 'o1' }, 1, 0);
    expect(page.total).toBe(2);
    expect(page.jobs.map((j) => j.job_id)).toEqual([b.job_id]); // newest first
    expect((await q.list({ orgId: 'o1', datasetId: 'd1' }, 10, 0)).jobs.map((j) => j.job_id)).toEqual([a.job_id]);
    expect((await q.ofDataset('d1')).map((j) => j.job_id).sort()).toEqual([a.job_id, c.job_id].sort());
    expect((await q.ofSource('s1')).map((j) => j.job_id)).toEqual([b.job_id]);
    const updated = await q.update(a.job_id, (j) => ({ ...j, message: 'halfway' }));
    expect((await q.get(a.job_id))!.message).toBe('halfway');
    expect(updated.message).toBe('halfway');
    await q.updateFileAndJob(a.job_id, files[0]!.uuid, (f) => ({ ...f, status: 'completed' }), (j) => ({ ...j, progress_percentage: 50 }));
    expect((await q.file(a.job_id, files[0]!.uuid))!.status).toBe('completed');
    expect((await q.get(a.job_id))!.progress_percentage).toBe(50);
    await expect(q.update('nope', (j) => j)).rejects.toThrow(/vanished/);
    const counts = await q.counts();
    expect(counts.find((x) => x.kind === 'parquet' && x.status === 'pending')!.count).toBeGreaterThanOrEqual(3);
    await q.remove([a.job_id, b.job_id, c.job_id]);
    expect(await q.get(a.job_id)).toBeUndefined();
    expect(await q.files(a.job_id)).toEqual([]);
    expect(await q.byIdempotencyKey({ orgId: 'o1', datasetId: 'd1', key: 'k1' })).toBeUndefined();
    const unconfirmed = job({}, false);
    await q.create(unconfirmed, []);
    expect((await q.unconfirmed(new Date(Date.UTC(2030, 0, 1)).toISOString())).map((j) => j.job_id)).toContain(unconfirmed.job_id);
    await q.remove([unconfirmed.job_id]);
  });

  it('gives each job to one of many concurrent claimers, oldest first, never an unconfirmed one', async () => {
    const q1 = new PgJobQueue(pool, 'n1');
    const q2 = new PgJobQueue(pool, 'n2');
    const jobs = Array.from({ length: 30 }, () => job());
    for (const j of jobs) await q1.create(j, []);
    const hidden = job({}, false);
    await q1.create(hidden, []);
    const owners = [q1.newOwner(), q1.newOwner(), q2.newOwner(), q2.newOwner()];
    const taken: string[] = [];
    await Promise.all(
      owners.map(async (owner, i) => {
        const q = i < 2 ? q1 : q2;
        for (;;) {
          const got = await q.claim(owner, ['parquet'], 30_000);
          if (!got) return;
          expect(got.status).toBe('running');
          expect(got.lease_owner).toBe(owner);
          expect(got.attempts).toBe(1);
          taken.push(got.job_id);
        }
      }),
    );
    expect(taken.sort()).toEqual(jobs.map((j) => j.job_id).sort());
    expect((await q1.get(hidden.job_id))!.status).toBe('pending');
    await q1.remove([...taken, hidden.job_id]);
  });

  it('leases lapse on the database clock, renew and release by their owner only; a restarted node frees its earlier leases', async () => {
    const q1 = new PgJobQueue(pool, 'n1');
    const q2 = new PgJobQueue(pool, 'n2');
    const [a, b] = [job(), job()];
    await q1.create(a, []);
    await q1.create(b, []);
    const o1 = q1.newOwner();
    const o2 = q2.newOwner();
    expect((await q1.claim(o1, ['parquet'], 300))!.job_id).toBe(a.job_id);
    expect((await q2.claim(o2, ['parquet'], 60_000))!.job_id).toBe(b.job_id);
    expect(await q2.claim(o2, ['parquet'], 60_000)).toBeNull();
    expect(await q2.renew(a.job_id, o2, 60_000)).toBe(false);
    await sleep(400);
    // a's lease lapsed: n2 takes it (second attempt); n1's renewal now fails.
    const again = await q2.claim(o2, ['parquet'], 60_000);
    expect(again!.job_id).toBe(a.job_id);
    expect(again!.attempts).toBe(2);
    expect(await q1.renew(a.job_id, o1, 60_000)).toBe(false);
    expect(await q2.renew(a.job_id, o2, 60_000)).toBe(true);
    await q2.release(a.job_id, o2);
    expect((await q1.claim(o1, ['parquet'], 60_000))!.job_id).toBe(a.job_id);
    // n2 "restarts" (an earlier process's leases, as if its pid differed): they are freed.
    await pool.query(`UPDATE job_records SET lease_owner = 'n2/1/dead' WHERE job_id = $1`, [b.job_id]);
    await new PgJobQueue(pool, 'n2').start();
    expect((await q1.claim(o1, ['parquet'], 60_000))!.job_id).toBe(b.job_id);
    // A finished job is never claimed again.
    await q1.update(a.job_id, (j) => finish(j, 'completed', null));
    await q1.update(b.job_id, (j) => finish(j, 'completed', null));
    expect(await q2.claim(o2, ['parquet'], 60_000)).toBeNull();
    await q1.remove([a.job_id, b.job_id]);
  });

  it('the job runner on two nodes runs each of 20 jobs once', async () => {
    const runs = new Map<string, number>();
    const handlerOf = (q: PgJobQueue): JobHandler => ({
      kind: 'parquet',
      async run(j) {
        runs.set(j.job_id, (runs.get(j.job_id) ?? 0) + 1);
        await sleep(5);
        await q.update(j.job_id, (x) => finish(x, 'completed', null));
      },
      async filesForRetry() {
        return [];
      },
    });
    const q1 = new PgJobQueue(pool, 'n1');
    const q2 = new PgJobQueue(pool, 'n2');
    const runners = [new JobRunner(q1, [handlerOf(q1)], { pollMs: 20 }), new JobRunner(q2, [handlerOf(q2)], { pollMs: 20 })];
    const jobs = Array.from({ length: 20 }, () => job());
    for (const j of jobs) await q1.create(j, []);
    for (const r of runners) r.start();
    const end = Date.now() + 15_000;
    while (Date.now() < end) {
      const states = await Promise.all(jobs.map((j) => q2.get(j.job_id)));
      if (states.every((s) => s!.status === 'completed')) break;
      await sleep(50);
    }
    for (const r of runners) await r.close();
    expect(jobs.map((j) => runs.get(j.job_id))).toEqual(jobs.map(() => 1));
  });

  it('refuses every write of an attempt once a newer attempt took the job, and changes nothing', async () => {
    const q1 = new PgJobQueue(pool, 'n1');
    const q2 = new PgJobQueue(pool, 'n2');
    const a = job();
    const f = newFile({ jobId: a.job_id, fileId: 'f1', position: 0, name: 'f1.parquet', key: 'uploads/f1', size: 10, contentType: 'application/vnd.apache.parquet' });
    await q1.create(a, [f]);
    const o1 = q1.newOwner();
    const o2 = q2.newOwner();
    const first = (await q1.claim(o1, ['parquet'], 300))!;
    expect(first.attempts).toBe(1);
    // Attempt 1 writes while it is the latest.
    await asAttempt({ jobId: a.job_id, fence: 1 }, () => q1.updateFileAndJob(a.job_id, 'f1', (x) => ({ ...x, status: 'processing' }), (j) => ({ ...j, current_step: 'one' })));
    await sleep(400);
    const second = (await q2.claim(o2, ['parquet'], 60_000))!;
    expect(second.attempts).toBe(2);
    await asAttempt({ jobId: a.job_id, fence: 2 }, () => q2.updateFileAndJob(a.job_id, 'f1', (x) => ({ ...x, status: 'completed' }), (j) => finish(j, 'completed', null)));
    const done = await q2.get(a.job_id);
    const doneFile = await q2.file(a.job_id, 'f1');
    // Attempt 1 resumes: each of its writes is refused.
    const stale = <T,>(fn: () => Promise<T>) => asAttempt({ jobId: a.job_id, fence: 1 }, fn);
    for (const write of [
      () => q1.update(a.job_id, (j) => ({ ...j, status: 'running', progress_percentage: 10 })),
      () => q1.updateFile(a.job_id, 'f1', (x) => ({ ...x, status: 'failed' })),
      () => q1.updateFileAndJob(a.job_id, 'f1', (x) => ({ ...x, status: 'failed' }), (j) => ({ ...j, documents_processed: 9 })),
      () => q1.put({ ...first, status: 'failed' }, [{ ...f, status: 'failed' }]),
    ]) {
      const err = await stale(write).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(LeaseLost);
      expect((err as LeaseLost).latest).toBe(2);
    }
    expect(await stale(() => q1.renew(a.job_id, o1, 60_000))).toBe(false);
    await stale(() => q1.release(a.job_id, o1));
    expect(await q1.get(a.job_id)).toEqual(done);
    expect(await q1.file(a.job_id, 'f1')).toEqual(doneFile);
    expect(done!.status).toBe('completed');
    // Outside any attempt (the routes, the sweeper), writes are not fenced.
    await q1.update(a.job_id, (j) => ({ ...j, message: 'seen' }));
    expect((await q1.get(a.job_id))!.message).toBe('seen');
    await q1.remove([a.job_id]);
  });

  it('the runner stops an attempt whose lease was taken over without recording its end', async () => {
    const q1 = new PgJobQueue(pool, 'n1');
    const q2 = new PgJobQueue(pool, 'n2');
    const a = job();
    await q1.create(a, []);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const outcomes: string[] = [];
    const slow: JobHandler = {
      kind: 'parquet',
      async run(j) {
        await held; // as if paused past its lease
        // The late end of attempt 1: refused, so the runner records nothing for it.
        await q1.update(j.job_id, (x) => finish(x, 'failed', { type: 'internal', message: 'late' }));
        outcomes.push('late write went through');
      },
      async filesForRetry() {
        return [];
      },
    };
    // A long lease the renewal keeps: the test makes it lapse by hand, as a pause past it would.
    const r1 = new JobRunner(q1, [slow], { pollMs: 20, leaseMs: 60_000 });
    r1.start();
    let taken = false;
    for (let k = 0; k < 100 && !taken; k++) {
      taken = (await q1.get(a.job_id))!.attempts === 1;
      if (!taken) await sleep(20);
    }
    expect(taken).toBe(true);
    // The lease lapses (as for a paused worker) and n2 completes the job as attempt 2.
    await pool.query(`UPDATE job_records SET lease_until = now() - interval '1 second' WHERE job_id = $1`, [a.job_id]);
    const o2 = q2.newOwner();
    const second = (await q2.claim(o2, ['parquet'], 60_000))!;
    expect(second.attempts).toBe(2);
    await asAttempt({ jobId: a.job_id, fence: 2 }, () => q2.update(a.job_id, (x) => finish(x, 'completed', null)));
    const done = await q2.get(a.job_id);
    release();
    await sleep(200);
    await r1.close();
    expect(outcomes).toEqual([]);
    expect(await q2.get(a.job_id)).toEqual(done);
    await q1.remove([a.job_id]);
  });

  it('makes one job per schedule tick, however many firings of it; manual jobs are outside the key', async () => {
    const q1 = new PgJobQueue(pool, 'n1');
    const q2 = new PgJobQueue(pool, 'n2');
    const tick = '2026-11-27T10:00:00.000Z';
    const results = await Promise.all(
      [q1, q2, q1, q2].map((q) => {
        const j = job({ schedule_id: 'sch-1' });
        return atTick({ scheduleId: 'sch-1', tick }, () => q.create(j, [])).then(() => j.job_id, (e: unknown) => e);
      }),
    );
    const made = results.filter((r) => typeof r === 'string') as string[];
    expect(made).toHaveLength(1);
    for (const r of results.filter((x) => typeof x !== 'string')) expect(r).toBeInstanceOf(TickTaken);
    // The next tick, and manual triggers (no tick) of the same schedule, are other jobs.
    const next = job({ schedule_id: 'sch-1' });
    await atTick({ scheduleId: 'sch-1', tick: '2026-11-27T10:00:01.000Z' }, () => q1.create(next, []));
    const manual = [job({ schedule_id: 'sch-1' }), job({ schedule_id: 'sch-1' })];
    for (const m of manual) await q2.create(m, []);
    // A tick of another schedule does not key this schedule's jobs.
    const other = job({ schedule_id: 'sch-2' });
    await atTick({ scheduleId: 'sch-1', tick }, () => q1.create(other, []));
    const { rows } = await pool.query(`SELECT job_id, scheduled_for FROM job_records WHERE schedule_id IN ('sch-1', 'sch-2') ORDER BY job_id`);
    const byId = new Map(rows.map((r) => [r.job_id, r.scheduled_for]));
    expect(byId.get(made[0]!)).toBe(tick);
    expect(byId.get(next.job_id)).toBe('2026-11-27T10:00:01.000Z');
    for (const m of manual) expect(byId.get(m.job_id)).toBeNull();
    expect(byId.get(other.job_id)).toBeNull();
    await q1.remove(rows.map((r) => r.job_id));
  });

  it('a tick whose job was made by a node that died before moving the schedule on gets no second job; the schedule moves on', async () => {
    const q = new PgJobQueue(pool, 'n1');
    const T = '2026-11-27T11:00:00.000Z';
    const items: Scheduled[] = [{ id: 'sch-die', cron: '0 * * * *', timezone: 'UTC', next_run_at: T }];
    const store: ScheduleStore = {
      async due(now) {
        return items.filter((x) => x.next_run_at !== null && x.next_run_at <= now.toISOString()).map((x) => ({ ...x }));
      },
      async fired(id, expected, _at, next) {
        const x = items.find((i) => i.id === id)!;
        if (x.next_run_at !== expected) return false;
        x.next_run_at = next;
        return true;
      },
    };
    // The node that dies: its job is made, then it never moves the schedule on.
    const dying: ScheduleStore = { due: (now) => store.due(now), fired: async () => Promise.reject(new Error('killed')) };
    const fire = async (x: Scheduled) => void (await q.create(job({ schedule_id: x.id }), []));
    const now = new Date('2026-11-27T11:00:00.500Z');
    await new Scheduler(dying, fire, { fireFirst: true }).tick(now);
    expect(items[0]!.next_run_at).toBe(T);
    // Two live nodes tick at once: the tick's job exists (TickTaken), the schedule moves on.
    await Promise.all([new Scheduler(store, fire, { fireFirst: true }).tick(now), new Scheduler(store, fire, { fireFirst: true }).tick(now)]);
    expect(items[0]!.next_run_at).toBe('2026-11-27T12:00:00.000Z');
    const { rows } = await pool.query(`SELECT job_id, scheduled_for FROM job_records WHERE schedule_id = 'sch-die'`);
    expect(rows.map((r) => r.scheduled_for)).toEqual([T]);
    // The compare-and-set first (one machine's order) would have lost this tick: moved on, no job.
    items[0]!.next_run_at = '2026-11-27T12:00:00.000Z';
    const killedAfterTheSet = async () => Promise.reject(new Error('killed'));
    await new Scheduler(store, killedAfterTheSet).tick(new Date('2026-11-27T12:00:00.500Z'));
    expect(items[0]!.next_run_at).toBe('2026-11-27T13:00:00.000Z');
    expect((await pool.query(`SELECT count(*)::int AS n FROM job_records WHERE schedule_id = 'sch-die'`)).rows[0].n).toBe(1);
    await q.remove(rows.map((r) => r.job_id));
  });
});
