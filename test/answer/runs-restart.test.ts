// Answer runs outlive the process in embedded mode (answer/runs/local-run-log.ts): a real
// `sable serve` on a data directory is stopped (SIGTERM) or killed (SIGKILL) and started again on
// it. Afterwards GET /intelligence/runs/{id}, its events (JSON, SSE, with and without
// Last-Event-ID) and a re-attach by run_id answer what was recorded; a run the kill cut off
// ends, at the next start, failed with an error chunk and one done, its seqs gap-free; a run
// past its retention is gone from the disk; another organization's key finds nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlStore } from '../../dist/catalog/store.js';
import { lookupKey } from '../../dist/control-plane/auth/keys.js';
import { startChatServer } from '../../testkit/peers/chat-server.js';
import { readFrames, streamProblems, type Frame } from '../../testkit/sse.js';
import { adminKey, client, serve, type Served } from '../support/serve.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LIGHTHOUSE = 'The lighthouse keeper climbs 217 steps every evening to light the lamp.';

describe('answer runs across restarts (embedded, on disk)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-runs-restart-'));
  let chat: Awaited<ReturnType<typeof startChatServer>>;
  let svc: Served;
  let admin: string;
  let other: string;
  let dataset: string;
  const env = () => ({ SABLE_LLM_URL: chat.url, SABLE_LLM_API_KEY: 'unused', SABLE_LLM_TIMEOUT_MS: '60000' });
  const call = (key = () => admin) => (method: string, path: string, body?: unknown) => client(() => svc.url, key())(method, path, body);
  const api = call();
  const query = (body: Record<string, unknown>, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${svc.url}/intelligence/query`, { method: 'POST', signal, headers: { 'x-api-key': admin, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const replay = (runId: string, headers: Record<string, string> = {}, key = admin) =>
    fetch(`${svc.url}/intelligence/runs/${runId}/events`, { headers: { 'x-api-key': key, accept: 'text/event-stream', ...headers } });
  const restart = async (signal: 'SIGTERM' | 'SIGKILL') => {
    await svc.stop(signal);
    svc = await serve(dir, env());
  };
  /** Polls the run until `ok` holds of its record (bounded). */
  const until = async (runId: string, ok: (r: any) => boolean, ms = 5000) => {
    const end = Date.now() + ms;
    for (;;) {
      const r = await api('GET', `/intelligence/runs/${runId}`);
      if ((r.status === 200 && ok(r.body)) || Date.now() > end) return r.body;
      await sleep(50);
    }
  };

  beforeAll(async () => {
    chat = await startChatServer();
    svc = await serve(dir, env());
    admin = adminKey(dir);
    // Made after the first start: the first start makes the admin key only on an empty catalog.
    other = JSON.parse(execFileSync(process.execPath, [CLI, 'keys', 'create', '--org', 'other', '--role', 'admin', '--data-dir', dir]).toString()).key;
    const created = await api('POST', '/datasets', { name: 'lighthouse' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    dataset = created.body.id;
    for (let k = 0; k < 100; k++) {
      const put = await api('POST', `/datasets/${dataset}/insert`, { vectors: [{ id: 1, metadata: { text: `${LIGHTHOUSE} The lamp burns paraffin oil.` } }] });
      if (put.status === 200) break;
      expect(put.status, JSON.stringify(put.body)).toBe(503);
      await sleep(100);
    }
  }, 60_000);
  afterAll(async () => {
    await svc?.stop('SIGKILL');
    await chat?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ended runs read the same after SIGTERM and after kill -9: record, events, SSE replay with and without Last-Event-ID, re-attach; not for another org', async () => {
    const asked: { body: Record<string, unknown>; streamed: Frame[]; record: any; events2: any }[] = [];
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      // A run answered by this process, then the stop or the kill (the run's last chunks are on
      // disk within 50 ms of its end).
      const body = { query: 'How many steps does the keeper climb?', dataset_ids: [dataset], run_id: `kept-${signal}`, mode: 'fast' };
      const streamed = await readFrames(await query(body));
      expect(streamProblems(streamed)).toEqual([]);
      expect(streamed.at(-1)!.metadata.status).toBe('succeeded');
      const record = (await api('GET', `/intelligence/runs/${body.run_id}`)).body;
      expect(record).toMatchObject({ status: 'succeeded', last_seq: streamed.length });
      expect(record.answer).toContain('217 steps');
      asked.push({ body, streamed, record, events2: (await api('GET', `/intelligence/runs/${body.run_id}/events?after=2`)).body });
      await sleep(200);
      await restart(signal);

      for (const { body, streamed, record, events2 } of asked) {
        const id = body.run_id as string;
        const what = `${id} after ${signal}`;
        expect((await api('GET', `/intelligence/runs/${id}`)).body, what).toEqual(record);
        expect((await api('GET', `/intelligence/runs/${id}/events?after=2`)).body, what).toEqual(events2);
        expect(await readFrames(await replay(id)), what).toEqual(streamed);
        expect(await readFrames(await replay(id, { 'last-event-id': '3' })), what).toEqual(streamed.slice(3));
        // After the last chunk of an ended run nothing is left (an EventSource stops).
        expect((await replay(id, { 'last-event-id': String(streamed.length) })).status, what).toBe(204);
        // The same question with its run_id re-attaches to the record, after Last-Event-ID.
        expect(await readFrames(await query(body, { 'last-event-id': '5' })), what).toEqual(streamed.slice(5));
        const json = await query({ ...body, stream: false });
        expect(json.status, what).toBe(200);
        expect(await json.json(), what).toMatchObject({ answer: record.answer });
        // Another organization's key: no such run.
        const theirs = await call(() => other)('GET', `/intelligence/runs/${id}`);
        expect(theirs.status, what).toBe(404);
        expect(theirs.body.error, what).toBe('run_not_found');
        expect((await call(() => other)('GET', `/intelligence/runs/${id}/events?after=0`)).status, what).toBe(404);
        expect((await replay(id, {}, other)).status, what).toBe(404);
      }
    }
  }, 40_000);

  it('a run cut off by kill -9 ends failed at the next start: what was recorded, then error and one done, seqs gap-free', async () => {
    // The model writes slowly: the run is answering when the process is killed.
    const sentences = Array.from({ length: 40 }, () => `${LIGHTHOUSE} [1]`).join(' ');
    chat.script({ kind: 'text', text: sentences, delayMs: 40 });
    const body = { query: 'Tell me about the keeper', dataset_ids: [dataset], run_id: 'cut', mode: 'fast' };
    // The client reads until two sentences arrived, then its connection drops (the run goes on).
    const abort = new AbortController();
    const seen: Frame[] = [];
    const texts = () => seen.filter((f) => f.chunk_type === 'text').length;
    await readFrames(await query(body, {}, abort.signal), {
      onFrame: (f) => {
        seen.push(f);
        if (texts() === 2) abort.abort();
      },
    }).catch(() => []);
    expect(texts()).toBe(2);
    const seenSeq = seen.at(-1)!.id!;
    // Chunks are on disk within 50 ms of being sent: then the kill, while the model still writes.
    await sleep(300);
    expect((await api('GET', '/intelligence/runs/cut')).body).toMatchObject({ status: 'running' });
    await svc.stop('SIGKILL');
    svc = await serve(dir, env());

    const frames = await readFrames(await replay('cut'));
    // Said once, on stderr, by the start that ended it.
    for (let k = 0; k < 40 && svc.linesStartingWith('sable: 1 answer run(s) left running').length === 0; k++) await sleep(25);
    expect(svc.linesStartingWith('sable: 1 answer run(s) left running')).toHaveLength(1);
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => i + 1));
    expect(frames.filter((f) => f.chunk_type === 'done')).toHaveLength(1);
    expect(frames.at(-1)).toMatchObject({ chunk_type: 'done', metadata: { run_id: 'cut', status: 'failed' } });
    expect(frames.at(-2)).toMatchObject({ chunk_type: 'error', metadata: { code: 'internal' } });
    const recorded = frames.slice(0, -2);
    // Everything the client saw was recorded (it waited for that), and is replayed as it was sent.
    expect(recorded.slice(0, seen.length)).toEqual(seen);
    expect(streamProblems(frames).filter((p) => !/citation/.test(p))).toEqual([]);

    const record = (await api('GET', '/intelligence/runs/cut')).body;
    expect(record).toMatchObject({ status: 'failed', last_seq: frames.length });
    expect(record.answer).toBe(recorded.filter((f) => f.chunk_type === 'text').map((f) => f.content).join(''));
    expect(record.answer).toContain('217 steps');
    // A client resuming after what it saw gets the rest and the end, by the events or by re-attaching.
    expect(await readFrames(await replay('cut', { 'last-event-id': String(seenSeq) }))).toEqual(frames.slice(seenSeq));
    expect(await readFrames(await query(body, { 'last-event-id': String(seenSeq) }))).toEqual(frames.slice(seenSeq));
    const json = await query({ ...body, stream: false });
    expect(json.status).toBe(500);
    expect((await json.json()).error).toBe('internal');
    expect((await call(() => other)('GET', '/intelligence/runs/cut')).status).toBe(404);

    // Ended once: a later start finds nothing left running.
    await restart('SIGTERM');
    expect(svc.linesStartingWith('sable: 1 answer run(s) left running')).toHaveLength(0);
    expect(await readFrames(await replay('cut'))).toEqual(frames);
  }, 40_000);

  it('a run answering at SIGTERM is ended by the stopping service (cancelled, one done) and reads so after the start', async () => {
    chat.script({ kind: 'hang' });
    const body = { query: 'What does the lamp burn?', dataset_ids: [dataset], run_id: 'stopped', mode: 'fast' };
    const abort = new AbortController();
    await readFrames(await query(body, {}, abort.signal), { stopAfter: 1, abort });
    await until('stopped', (r) => r.last_seq >= 3);
    await restart('SIGTERM');
    expect(svc.linesStartingWith('sable: 1 answer run(s) left running')).toHaveLength(0);
    const frames = await readFrames(await replay('stopped'));
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => i + 1));
    expect(frames.filter((f) => f.chunk_type === 'done')).toHaveLength(1);
    expect(frames.at(-1)).toMatchObject({ chunk_type: 'done', metadata: { status: 'cancelled' } });
    expect(frames.at(-2)!.metadata).toMatchObject({ action: 'run.cancelled' });
    expect((await api('GET', '/intelligence/runs/stopped')).body.status).toBe('cancelled');
  }, 30_000);

  it('runs past their retention are removed from the disk at the start; those within it stay', async () => {
    await svc.stop('SIGTERM');
    // Two runs as an earlier process left them, written straight into the data directory's store.
    const store = new ControlStore(dir);
    const org = lookupKey(store, admin)!.org_id;
    const rows = store.open<any, any>('runs');
    const chunks = store.open<any, any>('runChunks');
    const minutesAgo = (m: number) => Date.now() - m * 60_000;
    await store.writeLocal(() => {
      for (const [id, ended] of [['old', minutesAgo(16)], ['recent', minutesAgo(14)]] as const) {
        void rows.put([org, id], { query: 'q', status: 'succeeded', result: null, failure: null, started_at: ended - 1000, ended_at: ended });
        void chunks.put([org, id, 1], { chunk: { seq: 1, chunk_type: 'done', content: '', metadata: { run_id: id, status: 'succeeded' } } });
      }
    });
    await store.close();
    svc = await serve(dir, env());
    expect((await api('GET', '/intelligence/runs/old')).status).toBe(404);
    expect((await api('GET', '/intelligence/runs/recent')).body).toMatchObject({ status: 'succeeded', last_seq: 1 });
    await svc.stop('SIGTERM');
    const after = new ControlStore(dir);
    try {
      expect(after.open<any, any>('runs').get([org, 'old'])).toBeUndefined();
      expect([...after.open<any, any>('runChunks').getKeys({ start: [org, 'old'], end: [org, 'old', Infinity] })]).toEqual([]);
      expect(after.open<any, any>('runs').get([org, 'recent'])).toBeDefined();
    } finally {
      await after.close();
    }
    svc = await serve(dir, env());
  }, 30_000);
});
