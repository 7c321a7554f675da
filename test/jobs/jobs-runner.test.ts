// The job runner over the LMDB queue, with a handler of its own: leases (a job held by a live
// runner is left alone, one whose runner died is taken at once, one whose lease lapsed is taken
// after the lapse), renewal while a job runs, the time bound, the bound on attempts, and resume
// after a stop.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ControlStore } from '../../dist/catalog/store.js';
import { LmdbJobQueue } from '../../dist/jobs/lmdb-queue.js';
import { newFile, newJob, queued, type JobRecord } from '../../dist/jobs/records.js';
import { finish } from '../../dist/jobs/records.js';
import { Interrupted, JobRunner, type JobContext, type JobHandler } from '../../dist/jobs/runner.js';

/** A handler that records its calls and runs `body` (default: completes at once). */
function handler(body: (job: JobRecord, ctx: JobContext, queue: LmdbJobQueue) => Promise<void> = async () => {}, timeoutMs?: number) {
  const calls: { id: string; resumed: boolean }[] = [];
  let queue!: LmdbJobQueue;
  const h: JobHandler & { calls: typeof calls; bind(q: LmdbJobQueue): void } = {
    kind: 'parquet',
    timeoutMs,
    calls,
    bind: (q) => (queue = q),
    async run(job, ctx) {
      calls.push({ id: job.job_id, resumed: ctx.resumed });
      await body(job, ctx, queue);
      await queue.update(job.job_id, (j) => finish(j, 'completed', null));
    },
    async filesForRetry() {
      return [];
    },
  };
  return h;
}

async function until<T>(what: string, f: () => Promise<T | undefined | false>, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the job runner', () => {
  let dir: string;
  let store: ControlStore;
  let queue: LmdbJobQueue;
  const runners: JobRunner[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sable-jobs-'));
    store = new ControlStore(dir);
    queue = new LmdbJobQueue(store);
  });
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (h: ReturnType<typeof handler>, opts = {}) => {
    h.bind(queue);
    const r = new JobRunner(queue, [h], { pollMs: 20, ...opts });
    runners.push(r);
    r.start();
    return r;
  };
  const enqueue = async (patch: Partial<JobRecord> = {}) => {
    const job = { ...queued(newJob({ kind: 'parquet', orgId: 'o', datasetId: 'd', validateOnly: false, idempotencyKey: null }), 0, 'queued'), ...patch };
    await queue.create(job, []);
    return job.job_id;
  };
  const status = async (id: string) => (await queue.get(id))?.status;

  it('runs queued jobs in order, and only queued ones', async () => {
    const h = handler();
    const unconfirmed = newJob({ kind: 'parquet', orgId: 'o', datasetId: 'd', validateOnly: false, idempotencyKey: null });
    await queue.create(unconfirmed, []);
    const a = await enqueue();
    const b = await enqueue();
    start(h);
    await until('both jobs', async () => (await status(b)) === 'completed' && (await status(a)) === 'completed');
    expect(h.calls.map((c) => c.id)).toEqual([a, b]);
    expect(await status(unconfirmed.job_id)).toBe('pending');
  });

  it('ends an upload that was never completed once its URLs are long expired (upload_expired), files with their reasons', async () => {
    const stale = { ...newJob({ kind: 'parquet', orgId: 'o', datasetId: 'd', validateOnly: false, idempotencyKey: null }), created_at: new Date(Date.now() - 10_000).toISOString() };
    const file = (i: number) => newFile({ jobId: stale.job_id, fileId: `f${i}`, position: i, name: `p${i}.parquet`, key: `k${i}`, size: 10, contentType: 'application/vnd.apache.parquet' });
    await queue.create(stale, [{ ...file(0), uploaded_at: new Date().toISOString() }, file(1)]);
    const fresh = newJob({ kind: 'parquet', orgId: 'o', datasetId: 'd', validateOnly: false, idempotencyKey: null });
    await queue.create(fresh, []);
    start(handler(), { uploadWindowMs: 5000 });
    await until('the stale upload to end', async () => (await status(stale.job_id)) === 'failed');
    const ended = (await queue.get(stale.job_id))!;
    expect(ended.error_details).toMatchObject({ type: 'upload_expired' });
    expect(ended.completed_at).not.toBeNull();
    expect((await queue.files(stale.job_id)).map((f) => [f.status, f.error_type])).toEqual([['failed', 'upload_expired'], ['failed', 'upload_missing']]);
    // An upload still inside its window waits.
    expect(await status(fresh.job_id)).toBe('pending');
  });

  it('leaves a job alone while a live runner holds it, and takes it once the lease lapses', async () => {
    // A live process of this host holds the lease (our parent) for 300 ms.
    const id = await enqueue({ status: 'running', lease_owner: `${hostname()}/${process.ppid}/other`, lease_expires_at: Date.now() + 300, attempts: 1 });
    const h = handler();
    start(h);
    await new Promise((r) => setTimeout(r, 150));
    expect(h.calls).toEqual([]);
    await until('the lapsed job', async () => (await status(id)) === 'completed');
    expect(h.calls).toEqual([{ id, resumed: true }]);
  });

  it('takes at once a job whose runner died (its process is gone)', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    const deadPid = child.pid!;
    await new Promise((r) => child.once('exit', r));
    const id = await enqueue({ status: 'running', lease_owner: `${hostname()}/${deadPid}/gone`, lease_expires_at: Date.now() + 3_600_000, attempts: 1 });
    const h = handler();
    const t0 = Date.now();
    start(h);
    await until('the orphaned job', async () => (await status(id)) === 'completed');
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(h.calls[0].resumed).toBe(true);
  });

  it('renews the lease while a job runs', async () => {
    let release!: () => void;
    const h = handler(() => new Promise<void>((r) => (release = r)));
    const id = await enqueue();
    start(h, { leaseMs: 300 });
    const first = await until('the lease', async () => (await queue.get(id))?.lease_expires_at || undefined);
    await new Promise((r) => setTimeout(r, 400));
    const later = (await queue.get(id))!.lease_expires_at;
    expect(later).toBeGreaterThan(first);
    expect(later).toBeGreaterThan(Date.now());
    release();
    await until('completion', async () => (await status(id)) === 'completed');
  });

  it('fails a job that runs past its time bound', async () => {
    const h = handler(async (_job, ctx) => {
      while (!ctx.stopping()) await new Promise((r) => setTimeout(r, 5));
      throw new Interrupted();
    }, 100);
    const id = await enqueue();
    start(h);
    const job = await until('the failure', async () => ((await queue.get(id))?.status === 'failed' ? queue.get(id) : undefined));
    expect(job!.error_details).toMatchObject({ type: 'timed_out' });
  });

  it('ends failed a job taken too many times, its unfinished files with it, and tells the handler', async () => {
    const abandoned: string[] = [];
    const h = Object.assign(handler(), { abandoned: async (j: JobRecord) => void abandoned.push(j.job_id) });
    const job0 = { ...queued(newJob({ kind: 'parquet', orgId: 'o', datasetId: 'd', validateOnly: false, idempotencyKey: null }), 2, 'queued'), status: 'running' as const, lease_owner: null, lease_expires_at: 0, attempts: 3 };
    const file = (i: number, status: 'completed' | 'processing' | 'pending') => ({ ...newFile({ jobId: job0.job_id, fileId: `f${i}`, position: i, name: `p${i}`, key: `k${i}`, size: 1, contentType: 't' }), status });
    await queue.create(job0, [file(0, 'completed'), file(1, 'processing'), file(2, 'pending')]);
    const id = job0.job_id;
    start(h, { maxAttempts: 3 });
    const job = await until('the failure', async () => ((await queue.get(id))?.status === 'failed' ? queue.get(id) : undefined));
    expect(job!.error_details).toMatchObject({ type: 'too_many_attempts' });
    expect(h.calls).toEqual([]);
    expect((await queue.files(id)).map((f) => [f.status, f.error_type])).toEqual([['completed', null], ['failed', 'too_many_attempts'], ['failed', 'too_many_attempts']]);
    // The runner tells the handler after its write commits; a read can see the write first.
    await until('the handler told', async () => abandoned.length > 0);
    expect(abandoned).toEqual([id]);
  });

  it('a stop leaves the job running with its lease given back; the next runner resumes it at once', async () => {
    const h = handler(async (_job, ctx) => {
      while (!ctx.stopping()) await new Promise((r) => setTimeout(r, 5));
      throw new Interrupted();
    });
    const id = await enqueue();
    const r1 = start(h);
    await until('the start', async () => h.calls.length === 1);
    await r1.close();
    runners.splice(runners.indexOf(r1), 1);
    expect(await queue.get(id)).toMatchObject({ status: 'running', lease_owner: null });
    const h2 = handler();
    start(h2);
    await until('the resumed job', async () => (await status(id)) === 'completed');
    expect(h2.calls).toEqual([{ id, resumed: true }]);
  });
});
