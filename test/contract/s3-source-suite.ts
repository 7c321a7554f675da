// A listing source over HTTP, as a body of tests run against a target (./target.ts): an s3 source
// on a local S3-compatible server (its own process), read into a dataset by POST /ingestion/jobs and
// by schedules. Incremental sync by ETag, changed objects replaced, removed objects' chunks deleted,
// the deletion guard, oversize objects skipped, the private-network refusal; schedules with CRUD,
// trigger, no overlap, resume_state, a DST change on an injected clock, and a restart (those on the
// test's clock run where the service takes it: embedded). test/ingest/http-ingest-s3.test.ts runs it
// embedded, test/cluster/contract-three-nodes-2.test.ts on a three-node cluster.
import { Readable } from 'node:stream';
import { beforeAll, expect, it } from 'vitest';
import { S3Client } from '../../dist/outbound/s3-client.js';
import { startS3, S3_KEY, S3_SECRET, type LocalS3 } from '../../testkit/s3.js';
import { prose } from '../support/documents.js';
import { ingestClient } from '../support/ingest.js';
import type { EmbeddedTarget } from './embedded-target.js';
import type { ContractTarget, TargetProfile } from './target.js';

const BUCKET = 'manuals';

export interface S3SourcePeer {
  s3: LocalS3;
  bucket: S3Client;
  close(): Promise<void>;
}

/** The test's clock: what an embedded service reads as now (startService's `now`). */
export const s3SourceClock = { now: new Date('2026-03-28T07:00:00Z') };

/** The settings of the suite's target: private addresses allowed (the bucket is on 127.0.0.1), a fast scheduler tick. */
export const S3_SOURCE_FLAGS = { 'allow-private-network': 'true', 'schedule-tick-ms': '20' };

/** The local S3 server with the suite's objects. */
export async function startS3SourcePeer(): Promise<S3SourcePeer> {
  const s3 = await startS3(BUCKET);
  const bucket = new S3Client({ endpoint: s3.endpoint, bucket: BUCKET, region: 'us-east-1', accessKeyId: S3_KEY, secretAccessKey: S3_SECRET });
  const put = async (key: string, body: string | Buffer) => {
    const bytes = Buffer.from(body);
    const res = await bucket.send('PUT', key, { headers: { 'content-length': String(bytes.length), 'content-type': 'application/octet-stream' }, body: Readable.from([bytes]) });
    res.resume();
    expect(res.statusCode).toBe(200);
  };
  // Twelve documents, one too large, one of a type the patterns leave out, one outside the prefix.
  for (let i = 1; i <= 12; i++) await put(`docs/note-${String(i).padStart(2, '0')}.md`, `# Note ${i}\n\nNote ${i} is about ${['tides', 'comets', 'glaciers', 'bees'][i % 4]} number ${i}.`);
  await put('docs/huge.txt', prose(7000));
  await put('docs/photo.png', 'not really a png');
  await put('elsewhere/outside.md', '# Outside the prefix');
  return { s3, bucket, close: () => s3.stop() };
}

/** Registers the s3 source tests in the calling describe (in order: each reads what the one before synced). */
export function s3SourceSuite(profile: TargetProfile, t: () => ContractTarget, peer: () => S3SourcePeer): void {
  const can = (c: Parameters<typeof profile.can.has>[0]) => profile.can.has(c);
  const clock = s3SourceClock;
  let s3: LocalS3;
  let bucket: S3Client;
  let admin: string;
  const api = ingestClient(() => t().url(), () => admin);
  const dataset = async (name: string) => {
    const id = await api.dataset(name);
    await t().settle(id, admin);
    return id;
  };
  beforeAll(async () => {
    ({ s3, bucket } = peer());
    // An organization of its own: the schedule list is the organization's.
    admin = (await t().newKey('s3-source', 'admin')).key;
  });

  const put = async (key: string, body: string | Buffer) => {
    const bytes = Buffer.from(body);
    const res = await bucket.send('PUT', key, { headers: { 'content-length': String(bytes.length), 'content-type': 'application/octet-stream' }, body: Readable.from([bytes]) });
    res.resume();
    expect(res.statusCode).toBe(200);
  };
  const remove = async (key: string) => (await bucket.send('DELETE', key)).resume();
  const s3Source = async (name: string, extra: Record<string, unknown> = {}) => {
    const r = await api.call('POST', '/ingestion/sources', {
      source_type: 's3',
      name,
      config: { bucket: BUCKET, endpoint: s3.endpoint, access_key_id: S3_KEY, secret_access_key: S3_SECRET, prefix: 'docs/', file_patterns: ['*.md', '*.txt'], max_file_size_mb: 1, ...extra },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.id as string;
  };
  const run = async (sourceId: string, datasetId: string) => {
    const started = await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    return api.job(started.body.job_id);
  };
  /** Waits until `check` holds (the scheduler works on its own ticks). */
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 600; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  let datasetId: string;
  let sourceId: string;

  it('validates against the bucket: samples of matching objects, a warning for oversize ones', async () => {
    const v = (await api.call('POST', '/ingestion/sources/validate', {
      source_type: 's3',
      config: { bucket: BUCKET, endpoint: s3.endpoint, access_key_id: S3_KEY, secret_access_key: S3_SECRET, prefix: 'docs/', file_patterns: ['*.md', '*.txt'], max_file_size_mb: 1 },
    })).body;
    expect(v.success, v.message).toBe(true);
    expect(v.samples).toHaveLength(5);
    expect(v.samples[0]).toEqual({ title: 'docs/huge.txt', url: `s3://${BUCKET}/docs/huge.txt` });
    expect(v.warnings.join(' ')).toMatch(/1 matching object\(s\) are over max_file_size_mb \(1\)/);
    expect(v.normalized_config.secret_access_key).toBe('********');
    const denied = (await api.call('POST', '/ingestion/sources/validate', {
      source_type: 's3',
      config: { bucket: BUCKET, endpoint: s3.endpoint, access_key_id: S3_KEY, secret_access_key: 'wrong' },
    })).body;
    expect(denied.success).toBe(false);
    expect(denied.message).toMatch(/403.*access denied/);
  });

  it('reads the bucket into a dataset: matching objects ingested, the oversize one skipped, originals not retained', async () => {
    datasetId = await dataset('manuals');
    sourceId = await s3Source('manuals');
    const job = await run(sourceId, datasetId);
    expect(job.status).toBe('completed');
    expect(job.message).toMatch(/^12 document\(s\) ingested, 0 unchanged, 0 failed, 1 skipped;/);
    const files = await api.files(job.job_id);
    expect(files.total).toBe(13);
    expect(files.counts).toMatchObject({ completed: 12, skipped: 1, failed: 0 });
    expect(files.files.find((f: any) => f.file_name === 'huge.txt')).toMatchObject({ status: 'skipped', status_reason: expect.stringMatching(/^file_too_large: \d+ bytes; this source's limit is 1048576/) });
    const docs = await api.documents(datasetId);
    expect(docs).toHaveLength(12);
    const comet = docs.find((d) => d.name === 'note-01.md');
    expect(comet).toMatchObject({ path: 'docs/note-01.md', url: `s3://${BUCKET}/docs/note-01.md`, content_type: 'text/markdown', download_available: false, source_type: 's3' });
    expect((await api.call('GET', `/datasets/${datasetId}/documents/${comet.id}/download`)).body.error).toBe('document_unavailable');
    const [hit] = await api.search(datasetId, 'which note is about glaciers number 6?', { top_k: 1 });
    expect(hit.metadata).toMatchObject({ source_type: 's3', url: `s3://${BUCKET}/docs/note-06.md` });
  });

  it('syncs incrementally: unchanged objects skipped by ETag, a changed one replaced, a removed one deleted', async () => {
    const again = await run(sourceId, datasetId);
    expect((await api.files(again.job_id)).counts).toMatchObject({ skipped: 13, completed: 0 });
    expect((await api.files(again.job_id, '&status=skipped')).files.find((f: any) => f.file_name === 'note-02.md').status_reason).toBe('unchanged (the source reports the same version)');

    const vectors = await api.count(datasetId);
    await put('docs/note-02.md', '# Note 2\n\nNote 2 now explains how volcanoes form.');
    await remove('docs/note-03.md');
    const synced = await run(sourceId, datasetId);
    expect(synced.message).toMatch(/^1 document\(s\) ingested, 10 unchanged, 0 failed, 1 skipped, 1 removed;/);
    const stats = (await api.call('GET', `/ingestion/jobs/${synced.job_id}/statistics`)).body;
    expect(stats).toMatchObject({ documents_deleted: 1, deletions_withheld: 0 });
    const docs = await api.documents(datasetId);
    expect(docs.map((d) => d.name)).not.toContain('note-03.md');
    expect(docs).toHaveLength(11);
    expect(await api.count(datasetId)).toBe(vectors - 1);
    const [hit] = await api.search(datasetId, 'how do volcanoes form', { top_k: 1 });
    expect(hit.doc_value).toContain('volcanoes');
    for (const r of await api.search(datasetId, 'glaciers number 3', { top_k: 11 })) expect(r.metadata.name).not.toBe('note-03.md');
  });

  it('withholds deletions when a listing would remove more than 10 documents and over 20% of the source', async () => {
    const vectors = await api.count(datasetId);
    const keys = (await api.documents(datasetId)).map((d) => d.path);
    for (const k of keys) await remove(k);
    const job = await run(sourceId, datasetId);
    expect(job.status).toBe('completed');
    expect(job.message).toMatch(/11 document\(s\) gone from the source were not deleted: more than 10 and over 20%/);
    expect((await api.call('GET', `/ingestion/jobs/${job.job_id}/statistics`)).body).toMatchObject({ deletions_withheld: 11, documents_deleted: 0 });
    expect(await api.documents(datasetId)).toHaveLength(11);
    expect(await api.count(datasetId)).toBe(vectors);
    // The objects come back (a listing that was only flaky): nothing to restore, all unchanged.
    for (const k of keys) await put(k, k === 'docs/note-02.md' ? '# Note 2\n\nNote 2 now explains how volcanoes form.' : `# Note ${Number(k.slice(10, 12))}\n\nNote ${Number(k.slice(10, 12))} is about ${['tides', 'comets', 'glaciers', 'bees'][Number(k.slice(10, 12)) % 4]} number ${Number(k.slice(10, 12))}.`);
    const back = await run(sourceId, datasetId);
    expect((await api.files(back.job_id)).counts).toMatchObject({ completed: 0, failed: 0 });
    expect(await api.count(datasetId)).toBe(vectors);
  });

  let scheduleId: string;

  // embedding: the schedule's times are read on the test's clock, which only a service in this process takes (startService's `now`).
  it.skipIf(!can('embedding'))('creates, reads, lists, patches and deletes schedules; bad cron and time zones are 400', async () => {
    const created = await api.call('POST', '/ingestion/schedules', { source_id: sourceId, dataset_id: datasetId, cron: '0 9 * * *', timezone: 'Europe/Paris', metadata: { owner: 'docs' }, resume_state: { cursor: 'abc' } });
    expect(created.status).toBe(201);
    const s = created.body;
    scheduleId = s.id;
    expect(s).toMatchObject({ source_id: sourceId, dataset_id: datasetId, pipeline_id: null, cron: '0 9 * * *', timezone: 'Europe/Paris', enabled: true, last_run_at: null, metadata: { owner: 'docs' }, resume_state: { cursor: 'abc' } });
    // 09:00 in Paris on 28 March 2026 is 08:00 UTC (winter time).
    expect(s.next_run_at).toBe('2026-03-28T08:00:00.000Z');
    expect((await api.call('GET', `/ingestion/schedules/${s.id}`)).body).toEqual(s);
    const list = (await api.call('GET', '/ingestion/schedules')).body;
    expect(list).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.schedules[0]).toEqual(s);
    expect((await api.call('POST', '/ingestion/schedules', { source_id: sourceId, dataset_id: datasetId })).status).toBe(400);

    for (const bad of [{ cron: 'every day' }, { cron: '61 * * * *' }, { timezone: 'Mars/Olympus' }]) {
      const r = await api.call('PATCH', `/ingestion/schedules/${s.id}`, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error).toBe('invalid_request');
      const c = await api.call('POST', '/ingestion/schedules', { source_id: sourceId, dataset_id: datasetId, cron: '0 9 * * *', ...bad });
      expect(c.status).toBe(400);
    }
    const disabled = (await api.call('PATCH', `/ingestion/schedules/${s.id}`, { enabled: false })).body;
    expect(disabled).toMatchObject({ enabled: false, next_run_at: null });
    const enabled = (await api.call('PATCH', `/ingestion/schedules/${s.id}`, { enabled: true })).body;
    expect(enabled.next_run_at).toBe('2026-03-28T08:00:00.000Z');

    const spare = (await api.call('POST', '/ingestion/schedules', { source_id: sourceId, dataset_id: datasetId, cron: '*/5 * * * *' })).body;
    expect(spare.timezone).toBe('UTC');
    expect((await api.call('DELETE', `/ingestion/schedules/${spare.id}`)).status).toBe(204);
    expect((await api.call('GET', `/ingestion/schedules/${spare.id}`)).body.error).toBe('schedule_not_found');
    const other = (await t().newKey('s3-source-acme', 'admin')).key;
    expect((await api.call('GET', `/ingestion/schedules/${s.id}`, undefined, other)).body.error).toBe('schedule_not_found');
    expect((await api.call('POST', `/ingestion/schedules/${s.id}/trigger`, undefined, other)).body.error).toBe('schedule_not_found');
    expect((await api.call('POST', '/ingestion/schedules', { source_id: sourceId, dataset_id: datasetId, cron: '0 9 * * *' }, other)).body.error).toBe('source_not_found');
  });

  // embedding: the scheduler fires on the test's clock (startService's `now`).
  it.skipIf(!can('embedding'))('fires on its cron in its time zone across a DST change, keeps resume_state, and never runs twice at once', async () => {
    const get = async () => (await api.call('GET', `/ingestion/schedules/${scheduleId}`)).body;
    // Just past 09:00 Paris (winter): the scheduler starts a run.
    clock.now = new Date('2026-03-28T08:00:05Z');
    await until('the first run', async () => (await get()).last_run_at !== null);
    let s = await get();
    expect(s.last_run_at).toBe('2026-03-28T08:00:05.000Z');
    // The clocks go forward that night: the next 09:00 in Paris is 07:00 UTC.
    expect(s.next_run_at).toBe('2026-03-29T07:00:00.000Z');
    const jobs = async () => (await api.call('GET', `/ingestion/jobs?dataset_id=${datasetId}&limit=200`)).body.jobs as any[];
    await until('the first run to end', async () => (await jobs()).every((j) => j.status === 'completed' || j.status === 'failed'));
    s = await get();
    expect(s.resume_state).toMatchObject({ cursor: 'abc', last_job_id: expect.any(String) });
    expect(Date.parse(s.resume_state.last_synced_at)).not.toBeNaN();

    // Still 08:00 UTC on the 29th would be 10:00 Paris: at 06:59:59 UTC nothing is due yet.
    const before = (await jobs()).length;
    clock.now = new Date('2026-03-29T06:59:59Z');
    await new Promise((r) => setTimeout(r, 150));
    expect((await jobs()).length).toBe(before);
    clock.now = new Date('2026-03-29T07:00:01Z');
    await until('the run after the DST change', async () => (await get()).last_run_at === '2026-03-29T07:00:01.000Z');
    expect((await get()).next_run_at).toBe('2026-03-30T07:00:00.000Z');
    await until('it to end', async () => (await jobs()).every((j) => j.status === 'completed' || j.status === 'failed'));
    expect((await jobs()).length).toBe(before + 1);

    // Many objects make a run long enough to overlap: a trigger during it is 409, a due firing is skipped.
    for (let i = 0; i < 40; i++) await put(`docs/bulk-${i}.txt`, `Bulk document ${i}. ${prose(3, i)}`);
    const triggered = await api.call('POST', `/ingestion/schedules/${scheduleId}/trigger`);
    expect(triggered.status).toBe(201);
    expect(['pending', 'running']).toContain(triggered.body.status);
    const busy = await api.call('POST', `/ingestion/schedules/${scheduleId}/trigger`);
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: 'schedule_busy', job_id: triggered.body.job_id });
    clock.now = new Date('2026-03-30T07:00:02Z');
    await until('the firing to be skipped', async () => /sable_schedule_runs_total\{outcome="skipped_busy"\} [1-9]/.test(await (await fetch(`${t().url()}/metrics`)).text()));
    const done = await api.job(triggered.body.job_id);
    expect(done.status).toBe('completed');
    expect(done.documents_processed).toBe(40);
    const running = (await jobs()).filter((j) => j.status === 'pending' || j.status === 'running');
    expect(running).toEqual([]);
  });

  // embedding: the service is stopped and started again in this process, on the test's clock.
  it.skipIf(!can('embedding'))('survives a restart: the schedule is kept and fires on the new process', async () => {
    const before = (await api.call('GET', `/ingestion/schedules/${scheduleId}`)).body;
    const e = t() as EmbeddedTarget;
    await e.stop();
    await e.start();
    const after = (await api.call('GET', `/ingestion/schedules/${scheduleId}`)).body;
    expect(after).toEqual(before);
    clock.now = new Date(Date.parse(after.next_run_at) + 1000);
    await until('a run after the restart', async () => (await api.call('GET', `/ingestion/schedules/${scheduleId}`)).body.last_run_at === clock.now.toISOString());
  });

  // own-service: the setting is the deployment's, so the test needs a second service started without it.
  it.skipIf(!can('own-service'))('refuses private addresses unless the deployment allows them, naming the setting', async () => {
    const strict = await t().startOwn!({ 'allow-private-network': 'false' });
    try {
      const strictApi = ingestClient(() => strict.url, () => strict.admin);
      const v = (await strictApi.call('POST', '/ingestion/sources/validate', { source_type: 's3', config: { bucket: BUCKET, endpoint: s3.endpoint, access_key_id: S3_KEY, secret_access_key: S3_SECRET } })).body;
      expect(v.success).toBe(false);
      expect(v.message).toContain('SABLE_ALLOW_PRIVATE_NETWORK=true');
      const ds = await strictApi.dataset('strict');
      const src = (await strictApi.call('POST', '/ingestion/sources', { source_type: 's3', name: 'local', config: { bucket: BUCKET, endpoint: s3.endpoint.replace('127.0.0.1', 'localhost'), access_key_id: S3_KEY, secret_access_key: S3_SECRET } })).body.id;
      const started = (await strictApi.call('POST', '/ingestion/jobs', { source_id: src, dataset_id: ds })).body;
      const job = await strictApi.job(started.job_id);
      expect(job.status).toBe('failed');
      expect(job.error_details.type).toBe('source_unreachable');
      expect(job.message).toContain('SABLE_ALLOW_PRIVATE_NETWORK=true');
    } finally {
      await strict.close();
    }
  });
}
