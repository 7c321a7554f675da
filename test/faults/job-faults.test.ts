// Fault tests of jobs and schedules across nodes (the design's F3, F4, F5), in the faults CI step
// (`npm run test:faults`): three nodes on 127.0.0.2-4 with a node lease (and so a job lease) of
// 1.5 s. Ingestion jobs embed through a local OpenAI-compatible server whose answers the test
// slows down, so a job runs for seconds and its worker can be killed or paused mid-way.
// A trigger the test adds to the cluster's database logs every status change of a job and every
// write to a job that had ended; the invariants are read there and through the API:
//   F3  the worker killed (-9): the lease lapses, another node runs the job again (attempt 2), it
//       ends completed once, and every document is there once with its chunks (no duplicates);
//   F4  the worker paused (SIGSTOP) past its lease while another node completes the job, then
//       resumed: its late writes are refused by the fence (it says so), nothing of the job
//       changes after it ended, no status goes back;
//   F5  a schedule every second while nodes are killed and restarted at random: each tick the
//       schedule moved past has exactly one job (or none while its last run was in flight), and
//       a manual trigger adds exactly one.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeChanges } from '../../dist/cluster/catalog-log.js';
import { openPool, type Pool } from '../../dist/outbound/postgres/pool.js';
import { startCluster, until503Passes, type TestCluster } from '../support/cluster.js';

const DIM = 8;
const LEASE_MS = 1500;
let cluster: TestCluster;
let db: Pool;
/** The embedding server: each answer waits `delayMs`, or, while `hold`, until the test lets it go. */
const embedder = { delayMs: 0, calls: 0, hold: false, held: [] as (() => void)[] };
let embeddings: Server;

const sleep = (ms: number) => new Promise<void>((res) => setTimeout(res, ms));

function vectorOf(text: string): number[] {
  const h = createHash('sha256').update(text).digest();
  return Array.from({ length: DIM }, (_, i) => h[i]! / 255 - 0.5);
}

/** Waits for `check` to hold, polling every `every` ms, at most `ms`; resolves with its last value. */
async function waitFor<T>(what: string, ms: number, check: () => Promise<T>, ok: (v: T) => boolean, every = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms (last: ${JSON.stringify(v)})`);
    await sleep(every);
  }
}

/** Any running node (the first up). */
function up(): number {
  const i = cluster.nodes.findIndex((n) => n !== null);
  if (i < 0) throw new Error('no node is running');
  return i;
}

async function jobRow(jobId: string) {
  const { rows } = await db.query<{ status: string; lease_owner: string | null; fence: string; record: any }>('SELECT status, lease_owner, fence, record FROM job_records WHERE job_id = $1', [jobId]);
  return rows[0];
}

async function filesOf(jobId: string): Promise<any[]> {
  const { rows } = await db.query<{ record: any }>('SELECT record FROM job_file_records WHERE job_id = $1 ORDER BY position', [jobId]);
  return rows.map((r) => r.record);
}

async function completedFiles(jobId: string): Promise<number> {
  return (await filesOf(jobId)).filter((f) => f.status === 'completed').length;
}

/** The node (index) whose worker holds the job now, once it is running. */
async function workerOf(jobId: string): Promise<number> {
  const row = await waitFor(`job ${jobId} taken by a worker`, 30_000, () => jobRow(jobId), (r) => r?.status === 'running' && r.lease_owner !== null);
  return Number(/^n(\d+)\//.exec(row!.lease_owner!)![1]) - 1;
}

/** A dataset embedded by the test's server, a file_upload source, and `n` one-chunk files uploaded; resolves with the job's id once queued. */
async function uploadJob(name: string, n: number): Promise<{ datasetId: string; jobId: string; names: string[] }> {
  const call = cluster.call(up());
  const ds = await call('POST', '/datasets', { name, embedding: { provider: 'openai-compatible', model: 'toy', dim: DIM } });
  expect(ds.status, JSON.stringify(ds.body)).toBe(201);
  const src = await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: `${name}-files`, config: {} });
  expect(src.status, JSON.stringify(src.body)).toBe(201);
  const files = Array.from({ length: n }, (_, i) => ({ name: `${name}-${String(i).padStart(2, '0')}.txt`, text: `Note ${i} of ${name}: the tide tables of berth ${i * 7} say ${i % 5} knots.\n` }));
  const init = await until503Passes(() =>
    cluster.call(up())('POST', `/ingestion/sources/${src.body.id}/upload/init`, {
      dataset_id: ds.body.id,
      files: files.map((f) => ({ name: f.name, size_bytes: Buffer.byteLength(f.text), content_type: 'text/plain' })),
    }),
  );
  expect(init.status, JSON.stringify(init.body)).toBeLessThan(300);
  for (const [k, f] of files.entries()) {
    const put = await fetch(init.body.uploads[k].upload_url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: f.text });
    expect(put.status).toBeLessThan(300);
  }
  const done = await cluster.call(up())('POST', `/ingestion/sources/${src.body.id}/upload/complete`, { job_id: init.body.job_id, file_ids: init.body.uploads.map((u: { file_id: string }) => u.file_id) });
  expect(done.status, JSON.stringify(done.body)).toBeLessThan(300);
  return { datasetId: ds.body.id, jobId: init.body.job_id, names: files.map((f) => f.name) };
}

/** What the trigger logged of a job: status changes, and writes to it after it ended. */
async function historyOf(jobId: string): Promise<{ old_status: string; new_status: string; old_fence: string; new_fence: string }[]> {
  const { rows } = await db.query('SELECT old_status, new_status, old_fence, new_fence FROM job_history WHERE job_id = $1 ORDER BY id', [jobId]);
  return rows;
}

/** Every document of the dataset once, ready, with its chunks, and nothing else in the index. */
async function checkDocuments(datasetId: string, names: string[]): Promise<void> {
  const docs = await until503Passes(() => cluster.call(up())('GET', `/datasets/${datasetId}/documents?limit=200`));
  expect(docs.status).toBe(200);
  const list = docs.body.documents as { name: string; status: string; chunk_count: number }[];
  expect(list.map((d) => d.name).sort()).toEqual([...names].sort());
  expect(list.filter((d) => d.status !== 'ready'), JSON.stringify(list.filter((d) => d.status !== 'ready'))).toEqual([]);
  const chunks = list.reduce((s, d) => s + d.chunk_count, 0);
  expect(chunks).toBe(names.length);
  const stats = await until503Passes(() => cluster.call(up())('GET', `/datasets/${datasetId}/stats`));
  expect(stats.status).toBe(200);
  expect(stats.body.vector_count).toBe(chunks);
}

beforeAll(async () => {
  embeddings = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      embedder.calls++;
      const body = JSON.parse(raw) as { input: string[]; model: string };
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', model: body.model, data: body.input.map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(t) })), usage: { prompt_tokens: 1, total_tokens: 1 } }));
      };
      if (embedder.hold) embedder.held.push(answer);
      else if (embedder.delayMs > 0) setTimeout(answer, embedder.delayMs);
      else answer();
    });
  });
  await new Promise<void>((res) => embeddings.listen(0, '127.0.0.1', () => res()));
  const url = `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`;
  cluster = await startCluster({ nodes: 3, leaseMs: LEASE_MS, graceMs: 500, ackTimeoutMs: 1500, env: { SABLE_EMBEDDINGS_COMPATIBLE_URL: url, SABLE_SCHEDULE_TICK_MS: '250' } });
  db = openPool(cluster.pg.url, { max: 4 });
  // The test's witness of every job write that matters: status changes, and writes after the end.
  await db.query(`
    CREATE TABLE job_history (id bigserial PRIMARY KEY, job_id text, old_status text, new_status text, old_fence bigint, new_fence bigint, at timestamptz DEFAULT clock_timestamp());
    CREATE FUNCTION log_job_history() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.status IS DISTINCT FROM NEW.status OR (OLD.status IN ('completed', 'failed') AND OLD.record IS DISTINCT FROM NEW.record) THEN
        INSERT INTO job_history (job_id, old_status, new_status, old_fence, new_fence) VALUES (NEW.job_id, OLD.status, NEW.status, OLD.fence, NEW.fence);
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER job_history AFTER UPDATE ON job_records FOR EACH ROW EXECUTE FUNCTION log_job_history();
  `);
}, 90_000);

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  embeddings?.closeAllConnections();
  embeddings?.close();
});

describe('job faults', () => {
  it('F3: the node running an ingestion job is killed (-9): another node runs it again, it ends completed once, no document or vector twice', async () => {
    embedder.delayMs = 200;
    const { datasetId, jobId, names } = await uploadJob('f3', 24);
    const worker = await workerOf(jobId);
    await waitFor('a few files done before the kill', 30_000, () => completedFiles(jobId), (n) => n >= 3, 50);
    const before = await completedFiles(jobId);
    expect(before).toBeLessThan(names.length);
    await cluster.nodes[worker]!.stop('SIGKILL');
    cluster.nodes[worker] = null;
    const killedAt = Date.now();
    const end = await waitFor(`job ${jobId} ended`, 45_000, () => jobRow(jobId), (r) => r?.status === 'completed' || r?.status === 'failed', 200);
    expect(end!.status, JSON.stringify(end!.record)).toBe('completed');
    // Taken again once the lease lapsed: the second attempt (or later) ended it.
    expect(Number(end!.fence)).toBeGreaterThanOrEqual(2);
    expect(end!.record.attempts).toBe(Number(end!.fence));
    expect(Date.now() - killedAt).toBeLessThan(40_000);
    const history = await historyOf(jobId);
    expect(history.filter((h) => h.new_status === 'completed')).toHaveLength(1);
    expect(history.filter((h) => h.old_status === 'completed' || h.old_status === 'failed'), JSON.stringify(history)).toEqual([]);
    const files = await filesOf(jobId);
    expect(files.map((f) => f.status)).toEqual(names.map(() => 'completed'));
    expect(end!.record.documents_processed).toBe(names.length);
    expect(end!.record.vectors_inserted).toBe(names.length);
    await checkDocuments(datasetId, names);
    // The killed node comes back as itself; nothing of the job changes.
    await cluster.start(worker);
    await sleep(1000);
    expect((await jobRow(jobId))!.record).toEqual(end!.record);
    await checkDocuments(datasetId, names);
  }, 100_000);

  it('F4: the worker paused past its lease while another node completes the job: once resumed, its late writes hit the fence and nothing goes back', async () => {
    embedder.delayMs = 150;
    const { datasetId, jobId, names } = await uploadJob('f4', 24);
    const worker = await workerOf(jobId);
    await waitFor('a few files done before the pause', 30_000, () => completedFiles(jobId), (n) => n >= 3, 50);
    const paused = cluster.nodes[worker]!;
    // The worker is paused while both its files wait on their embeddings: not inside a database
    // transaction of its own, whose row locks a paused process would hold (every node's catalog
    // writes would wait on the paused one; the pool's idle_in_transaction_session_timeout bounds
    // that, far past this test). A background transaction caught by the pause: resumed, tried again.
    embedder.hold = true;
    await waitFor('both files of the worker waiting on embeddings', 15_000, async () => embedder.held.length, (n) => n >= 2, 20);
    let stopped = false;
    for (let k = 0; k < 10 && !stopped; k++) {
      process.kill(paused.pid, 'SIGSTOP');
      await sleep(100);
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND xact_start IS NOT NULL`, [`sable n${worker + 1}`]);
      if (rows[0].n === 0) stopped = true;
      else {
        process.kill(paused.pid, 'SIGCONT');
        await sleep(200);
      }
    }
    expect(stopped).toBe(true);
    let resumed = false;
    try {
      // Their answers reach the paused process; another node takes the job once the lease
      // lapsed and, with answers now quick, ends it.
      embedder.hold = false;
      embedder.delayMs = 0;
      for (const answer of embedder.held.splice(0)) answer();
      const end = await waitFor(`job ${jobId} ended by another node`, 30_000, () => jobRow(jobId), (r) => r?.status === 'completed' || r?.status === 'failed', 100);
      expect(end!.status, JSON.stringify(end!.record)).toBe('completed');
      expect(Number(end!.fence)).toBeGreaterThanOrEqual(2);
      const filesAtEnd = await filesOf(jobId);
      // The paused attempt goes on from its two answers: its renewal is refused (fence and owner),
      // it finds its lease lapsed, and any write it tries is refused (LeaseLost).
      process.kill(paused.pid, 'SIGCONT');
      resumed = true;
      await waitFor('the resumed worker stops its attempt', 10_000, async () => paused.stderr(), (e) => new RegExp(`job ${jobId}: attempt 1 (lost|outlived) its lease`).test(e), 100);
      await sleep(2000);
      expect((await jobRow(jobId))!.record).toEqual(end!.record);
      expect(await filesOf(jobId)).toEqual(filesAtEnd);
      const history = await historyOf(jobId);
      expect(history.filter((h) => h.new_status === 'completed')).toHaveLength(1);
      expect(history.filter((h) => h.old_status === 'completed' || h.old_status === 'failed'), JSON.stringify(history)).toEqual([]);
      expect(filesAtEnd.map((f) => f.status)).toEqual(names.map(() => 'completed'));
      await checkDocuments(datasetId, names);
    } finally {
      if (!resumed) process.kill(paused.pid, 'SIGCONT');
      embedder.hold = false;
      for (const answer of embedder.held.splice(0)) answer();
      embedder.delayMs = 0;
    }
  }, 100_000);

  it('F5: a schedule every second while nodes are killed and restarted: one job per tick it moved past, and a manual trigger adds one', async () => {
    for (const i of [0, 1, 2]) if (cluster.nodes[i] === null) await cluster.start(i);
    embedder.delayMs = 0;
    const call = cluster.call(0);
    const ds = await call('POST', '/datasets', { name: 'f5', embedding: { provider: 'openai-compatible', model: 'toy', dim: DIM } });
    expect(ds.status).toBe(201);
    // An empty upload source: each run lists nothing and ends within a moment.
    const src = await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'f5-files', config: {} });
    const made = await call('POST', '/ingestion/schedules', { source_id: src.body.id, dataset_id: ds.body.id, cron: '* * * * * *' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const scheduleId: string = made.body.id;
    const t0 = Date.now();
    // Kills and restarts at random for 20 s, two nodes up at least.
    let kills = 0;
    while (Date.now() - t0 < 20_000) {
      await sleep(500 + Math.random() * 1500);
      const running = [0, 1, 2].filter((i) => cluster.nodes[i] !== null);
      const down = [0, 1, 2].filter((i) => cluster.nodes[i] === null);
      if (down.length > 0 && (running.length < 3 || Math.random() < 0.5)) {
        await cluster.start(down[0]!);
        continue;
      }
      const victim = running[Math.floor(Math.random() * running.length)]!;
      await cluster.nodes[victim]!.stop('SIGKILL');
      cluster.nodes[victim] = null;
      kills++;
    }
    for (const i of [0, 1, 2]) if (cluster.nodes[i] === null) await cluster.start(i);
    await sleep(3000);
    const off = await until503Passes(() => cluster.call(1)('PATCH', `/ingestion/schedules/${scheduleId}`, { enabled: false }));
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    const seconds = (Date.now() - t0) / 1000;
    // Runs held by killed nodes end on other nodes within their lease.
    await waitFor('every run of the schedule ended', 30_000, async () => (await db.query(`SELECT count(*)::int AS n FROM job_records WHERE schedule_id = $1 AND status IN ('pending', 'running')`, [scheduleId])).rows[0].n, (n) => n === 0, 200);

    const { rows: jobs } = await db.query<{ job_id: string; scheduled_for: string | null; record: any }>('SELECT job_id, scheduled_for, record FROM job_records WHERE schedule_id = $1', [scheduleId]);
    const byTick = new Map<string, number>();
    for (const j of jobs) byTick.set(j.scheduled_for ?? 'none', (byTick.get(j.scheduled_for ?? 'none') ?? 0) + 1);
    // Every job is a tick's (no manual trigger yet), one per tick.
    expect(byTick.get('none')).toBeUndefined();
    expect([...byTick.values()].filter((n) => n > 1)).toEqual([]);
    expect(jobs.length, `${jobs.length} jobs in ${seconds.toFixed(1)} s with ${kills} kills`).toBeGreaterThan(seconds * 0.4);
    // The ticks the schedule moved past, from the catalog's log: each has its job, or was passed
    // over while a run of the schedule was in flight.
    const { rows: entries } = await db.query<{ changes: Buffer }>('SELECT changes FROM catalog_log ORDER BY seq');
    const versions = entries.flatMap((e) => decodeChanges(e.changes).filter((c) => c.db === 'schedules' && c.key === scheduleId && c.value !== undefined).map((c) => c.value as any));
    // (A tick whose job was made just as the schedule was disabled is passed by the disabling.)
    const passed: { tick: string; firedAt: string; enabled: boolean }[] = [];
    for (let k = 1; k < versions.length; k++) {
      const [a, b] = [versions[k - 1], versions[k]];
      if (a.next_run_at !== null && b.next_run_at !== a.next_run_at) passed.push({ tick: a.next_run_at, firedAt: b.last_run_at, enabled: b.enabled });
    }
    expect(passed.length).toBeGreaterThan(seconds * 0.4);
    const activeAt = (at: string) =>
      jobs.some((j) => Date.parse(j.record.created_at) <= Date.parse(at) + 5000 && (j.record.completed_at === null || Date.parse(j.record.completed_at) >= Date.parse(at)) && j.scheduled_for !== null);
    const lost = passed.filter((p) => p.enabled && !byTick.has(p.tick) && !activeAt(p.firedAt));
    expect(lost, `ticks moved past without a job while no run was in flight (of ${passed.length})`).toEqual([]);
    console.log(`F5: ${seconds.toFixed(1)} s, ${kills} kills, ${passed.length} ticks passed, ${jobs.length} jobs (one per tick), ${passed.filter((p) => !byTick.has(p.tick)).length} ticks passed over while a run was in flight`);
    const tickSet = new Set(passed.map((p) => p.tick));
    expect(jobs.filter((j) => !tickSet.has(j.scheduled_for!)).map((j) => j.scheduled_for)).toEqual([]);

    // A manual trigger: exactly one more job, outside the ticks.
    const trigger = await waitFor('the trigger accepted', 10_000, () => cluster.call(2)('POST', `/ingestion/schedules/${scheduleId}/trigger`), (r) => r.status !== 409 && r.status !== 503, 200);
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
    await sleep(1500);
    const { rows: after } = await db.query<{ job_id: string; scheduled_for: string | null }>('SELECT job_id, scheduled_for FROM job_records WHERE schedule_id = $1', [scheduleId]);
    expect(after.length).toBe(jobs.length + 1);
    expect(after.filter((j) => j.scheduled_for === null).map((j) => j.job_id)).toEqual([trigger.body.job_id]);
  }, 110_000);
});
