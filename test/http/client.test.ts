// The typed client (`sable-retrieval/client`) against a real service: every call it makes is an
// operation of /openapi.json; datasets, vectors (JSON and msgpack, ids past 2^32), uploads into a
// file_upload source, questions as JSON and as a stream that resumes after the connection drops
// (ids contiguous, none twice), 503 retried after Retry-After with one request id, errors thrown
// with the service's code and request id.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, SableApiError, SableClient, type StreamChunk } from '../../dist/client/index.js';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';

describe('the typed client', () => {
  let dir: string;
  let svc: Service;
  let client: SableClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-client-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir }, {}));
    client = new SableClient({ baseUrl: svc.url, apiKey: svc.createdAdminKey! });
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('calls only operations the OpenAPI document has', async () => {
    const doc = await (await fetch(svc.url + '/openapi.json')).json();
    for (const [name, [method, path]] of Object.entries(OPERATIONS)) expect(doc.paths[path]?.[method.toLowerCase()], `${name}: ${method} ${path}`).toBeDefined();
  });

  it('datasets and vectors, in JSON and in msgpack; errors carry the code and the request id', async () => {
    const ds = await client.createDataset({ name: 'typed', dim: 2, metric: 'l2' });
    await client.ensureEngine(ds.id);
    expect(await client.insert(ds.id, [{ id: 1, values: [1, 0] }, { id: 'two', values: [0, 1] }])).toEqual({ inserted: 2, embedded: 0 });
    const packed = new SableClient({ baseUrl: svc.url, apiKey: svc.createdAdminKey!, msgpack: true });
    expect(await packed.insert(ds.id, [{ id: 2 ** 40, values: [1, 1] }])).toEqual({ inserted: 1, embedded: 0 });
    const near = await packed.search(ds.id, { query: [0.9, 0.9], top_k: 1 });
    expect(near.results[0]!.id).toBe(2 ** 40);
    expect((await client.search(ds.id, { query: [1, 0.1], top_k: 1 })).results[0]!.id).toBe(1);
    expect((await client.stats(ds.id)).vector_count).toBe(3);
    const page = await client.listDatasets({ limit: 1 });
    expect([page.total, page.datasets.length]).toEqual([1, 1]);
    const missing = await client.getDataset('nope').catch((e) => e);
    expect(missing).toBeInstanceOf(SableApiError);
    expect([missing.status, missing.code]).toEqual([404, 'dataset_not_found']);
    expect(missing.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const typo = await client.call('POST', `/datasets/${ds.id}/search`, { body: { query: [1, 1], topK: 1 } }).catch((e) => e);
    expect(typo.message).toContain("unknown field 'topK'");
  });

  it('uploads files into a file_upload source and answers questions, as JSON and as a stream that survives a drop', async () => {
    const ds = await client.createDataset({ name: 'docs' });
    await client.ensureEngine(ds.id);
    const source = await client.createSource({ source_type: 'file_upload', name: 'notes', config: {} });
    const text = 'The lighthouse keeper climbs 217 steps every evening to light the lamp.';
    const started = await client.upload(source.id, ds.id, [{ name: 'keeper.txt', bytes: new TextEncoder().encode(text), contentType: 'text/plain' }]);
    expect((await client.waitForJob(started.job_id)).status).toBe('completed');
    const answer = await client.ask({ query: 'How many steps does the keeper climb?', dataset_ids: [ds.id] });
    expect(answer.answer).toContain('217 steps');

    // A transport that drops the first answer stream after its third frame, as a network would.
    let dropped = false;
    const dropping: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (dropped || !String(input).endsWith('/intelligence/query')) return res;
      dropped = true;
      const reader = res.body!.getReader();
      let frames = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(ctl) {
          const { value, done } = await reader.read();
          if (done) return ctl.close();
          frames += new TextDecoder().decode(value).split('\n\n').length - 1;
          ctl.enqueue(value);
          if (frames >= 3) {
            await reader.cancel();
            ctl.error(new TypeError('network error'));
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const flaky = new SableClient({ baseUrl: svc.url, apiKey: svc.createdAdminKey!, fetch: dropping });
    const chunks: StreamChunk[] = [];
    for await (const c of flaky.askStream({ query: 'How many steps does the keeper climb?', dataset_ids: [ds.id] })) chunks.push(c);
    expect(dropped).toBe(true);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i + 1));
    expect(chunks.at(-1)!.chunk_type).toBe('done');
    expect(chunks.filter((c) => c.chunk_type === 'text').map((c) => c.content).join('')).toContain('217 steps');
  });

  it('retries 503 after its Retry-After, with one request id, until the dataset is ready', async () => {
    const slowDir = mkdtempSync(join(tmpdir(), 'sable-client-slow-'));
    const slow = await startService(loadConfig({ port: '0', 'data-dir': slowDir, 'provision-delay-ms': '1500' }, {}));
    try {
      const seen: { status: number; requestId: string | null }[] = [];
      const recording: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        seen.push({ status: res.status, requestId: new Headers(init?.headers).get('x-request-id') });
        return res;
      };
      const patient = new SableClient({ baseUrl: slow.url, apiKey: slow.createdAdminKey!, fetch: recording });
      const ds = await patient.createDataset({ name: 'slow', dim: 2 });
      seen.length = 0;
      expect(await patient.insert(ds.id, [{ id: 1, values: [1, 2] }])).toEqual({ inserted: 1, embedded: 0 });
      expect(seen[0]!.status).toBe(503);
      expect(seen.at(-1)!.status).toBe(200);
      expect(new Set(seen.map((s) => s.requestId)).size).toBe(1);
    } finally {
      await slow.close();
      rmSync(slowDir, { recursive: true, force: true });
    }
  });
});
