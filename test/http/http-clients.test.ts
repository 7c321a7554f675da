// What integrators' clients meet (issue 28): request ids on every answer and in 500 bodies,
// msgpack from a standard encoder (@msgpack/msgpack writes ids of 2^32 and up as uint64) and its
// other media types, errors in the encoding the caller accepts, CORS for the origins a setting
// names, stream tokens for a browser EventSource, 204 for a finished run's stream, and start
// errors that name the setting to change.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, encode } from '@msgpack/msgpack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { Router } from '../../dist/control-plane/http/router.js';
import { readFrames } from '../../testkit/sse.js';

const ORIGIN = 'http://app.example.test:3000';

describe('a service with CORS for one origin', () => {
  let dir: string;
  let svc: Service;
  let key: string;
  let dataset: string;
  const call = (path: string, init: RequestInit = {}) => fetch(svc.url + path, { ...init, headers: { 'x-api-key': key, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-clients-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'cors-origins': ORIGIN }, {}));
    key = svc.createdAdminKey!;
    dataset = (await (await call('/datasets', { method: 'POST', body: JSON.stringify({ name: 'ids', dim: 2, metric: 'l2' }) })).json()).id;
    expect((await call(`/datasets/${dataset}/ensure-engine`, { method: 'POST', body: '{}' })).status).toBe(200);
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('echoes a valid X-Request-Id, mints one otherwise, on answers, errors and streams', async () => {
    const echoed = await call('/datasets', { headers: { 'x-request-id': 'trace-42.a:b' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-42.a:b');
    const minted = await call('/datasets/nope', { headers: { 'x-request-id': 'has spaces and\ttabs' } });
    expect(minted.status).toBe(404);
    expect(minted.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const stream = await call('/intelligence/query', { method: 'POST', body: JSON.stringify({ query: 'anything?', dataset_ids: [dataset] }) });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await stream.body!.cancel();
  });

  it('takes uint64 ids from a standard msgpack encoder within the 53-bit rule, under every msgpack media type', async () => {
    const big = 2 ** 32 + 5;
    expect(Buffer.from(encode({ id: big })).includes(0xcf)).toBe(true);
    const f32 = (...v: number[]) => new Uint8Array(Float32Array.from(v).buffer);
    for (const [i, type] of ['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack'].entries()) {
      const res = await call(`/datasets/${dataset}/insert`, { method: 'POST', headers: { 'content-type': type, accept: type }, body: encode({ vectors: [{ id: big + i, values: f32(i, 1) }] }) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/msgpack');
      expect(decode(new Uint8Array(await res.arrayBuffer()))).toEqual({ inserted: 1, embedded: 0 });
    }
    const found = await (await call(`/datasets/${dataset}/search`, { method: 'POST', body: JSON.stringify({ query: [2, 1], top_k: 3 }) })).json();
    expect(found.results.map((r: { id: number }) => r.id).sort()).toEqual([big, big + 1, big + 2]);
    // Past 2^53 the id is refused as it is in JSON, and the error comes back in msgpack.
    const tooBig = await call(`/datasets/${dataset}/insert`, { method: 'POST', headers: { 'content-type': 'application/msgpack' }, body: encode({ vectors: [{ id: BigInt(2) ** BigInt(60), values: f32(1, 1) }] }, { useBigInt64: true }) });
    expect(tooBig.status).toBe(400);
    expect(tooBig.headers.get('content-type')).toBe('application/msgpack');
    expect(decode(new Uint8Array(await tooBig.arrayBuffer()))).toMatchObject({ error: 'invalid_request' });
    const json = await call(`/datasets/${dataset}/insert`, { method: 'POST', body: `{"vectors":[{"id":${2 ** 60},"values":[1,1]}]}` });
    expect(json.status).toBe(400);
  });

  it('refuses a body field it does not know, by name, at the top and in nested objects', async () => {
    const typo = await call(`/datasets/${dataset}/search`, { method: 'POST', body: JSON.stringify({ query: [1, 1], topK: 3 }) });
    expect(typo.status).toBe(400);
    expect((await typo.json()).message).toMatch(/^body has an unknown field 'topK' \(its fields: query, query_text, .*top_k/);
    const nested = await call(`/datasets/${dataset}/insert`, { method: 'POST', body: JSON.stringify({ vectors: [{ id: 1, values: [1, 1], metdata: {} }] }) });
    expect(nested.status).toBe(400);
    expect((await nested.json()).message).toMatch(/^vectors\.0 has an unknown field 'metdata'/);
    // A source's config is checked by the schema its source_type picks, and refusals name the field.
    const source = (body: unknown) => call('/ingestion/sources', { method: 'POST', body: JSON.stringify(body) }).then(async (r) => [r.status, (await r.json()).message]);
    expect(await source({ source_type: 'web', name: 'w', config: {} })).toEqual([400, 'config.start_urls is required']);
    expect(await source({ source_type: 'web', name: 'w', config: { start_urls: ['https://a.test/'], max_depth: 99 } })).toEqual([400, 'config.max_depth must be an integer from 0 to 20']);
    expect(await source({ source_type: 'ftp', name: 'w', config: {} })).toEqual([400, 'source_type must be one of web, s3, gcs, gdrive, github, gitlab, jira, confluence, file_upload']);
    // Free-form maps stay free: metadata takes any key.
    expect((await call(`/datasets/${dataset}/insert`, { method: 'POST', body: JSON.stringify({ vectors: [{ id: 9, values: [1, 1], metadata: { anything: 'goes' } }] }) })).status).toBe(200);
  });

  it('answers in msgpack, errors included, on any route to a caller that accepts only msgpack', async () => {
    const res = await call('/datasets/nope/stats', { headers: { accept: 'application/vnd.msgpack' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/msgpack');
    expect(decode(new Uint8Array(await res.arrayBuffer()))).toMatchObject({ error: 'dataset_not_found' });
    const list = await call('/datasets?limit=1', { headers: { accept: 'application/msgpack' } });
    expect(list.headers.get('content-type')).toBe('application/msgpack');
    expect(decode(new Uint8Array(await list.arrayBuffer()))).toMatchObject({ total: 1, limit: 1, offset: 0 });
    // Naming JSON as well keeps JSON.
    expect((await call('/datasets', { headers: { accept: 'application/msgpack, application/json' } })).headers.get('content-type')).toBe('application/json');
  });

  it('answers preflights of the allowed origin for every route, streams and uploads included, and refuses others', async () => {
    const preflight = (path: string, method: string, origin = ORIGIN) =>
      fetch(svc.url + path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key, content-type' } });
    for (const [path, method, methods] of [
      [`/datasets/${dataset}/search`, 'POST', 'POST'],
      ['/intelligence/query', 'POST', 'POST'],
      ['/intelligence/runs/r1/events', 'GET', 'GET'],
      ['/uploads/some-token', 'PUT', 'PUT'],
      [`/datasets/${dataset}`, 'DELETE', 'GET, DELETE'],
    ]) {
      const res = await preflight(path, method);
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(res.headers.get('access-control-allow-methods')!.split(', ').sort()).toEqual([...methods.split(', '), 'OPTIONS'].sort());
      expect(res.headers.get('access-control-allow-headers')).toContain('x-api-key');
      expect(res.headers.get('vary')).toBe('Origin');
    }
    const other = await preflight(`/datasets/${dataset}/search`, 'POST', 'http://evil.example.test');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const answer = await call('/datasets', { headers: { origin: ORIGIN } });
    expect(answer.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(answer.headers.get('access-control-expose-headers')).toContain('x-request-id');
    expect((await call('/datasets', { headers: { origin: 'http://evil.example.test' } })).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a stream token reads its run without a key; a finished stream answers 204 so an EventSource stops', async () => {
    const res = await call('/intelligence/query', { method: 'POST', body: JSON.stringify({ query: 'what is stored?', dataset_ids: [dataset], run_id: 'browser-1' }) });
    const frames = await readFrames(res);
    const last = frames.at(-1)!;
    expect(last.chunk_type).toBe('done');
    const minted = await call('/intelligence/runs/browser-1/stream-token', { method: 'POST', body: '{}' });
    expect(minted.status).toBe(201);
    const { token, events_path: path } = await minted.json();
    const replay = await fetch(svc.url + path, { headers: { accept: 'text/event-stream' } });
    expect(replay.status).toBe(200);
    expect((await readFrames(replay)).map((f) => f.id)).toEqual(frames.map((f) => f.id));
    const done = await fetch(`${svc.url}${path}&after=${last.id}`, { headers: { accept: 'text/event-stream' } });
    expect(done.status).toBe(204);
    const resumed = await fetch(svc.url + path, { headers: { accept: 'text/event-stream', 'last-event-id': String(last.id) } });
    expect(resumed.status).toBe(204);
    // The token is for that run only, and only on the read-only run routes.
    await readFrames(await call('/intelligence/query', { method: 'POST', body: JSON.stringify({ query: 'another?', dataset_ids: [dataset], run_id: 'browser-2' }) }));
    expect((await fetch(`${svc.url}/intelligence/runs/browser-2/events?stream_token=${token}`)).status).toBe(401);
    expect((await fetch(`${svc.url}/datasets?stream_token=${token}`)).status).toBe(401);
    expect((await fetch(`${svc.url}/intelligence/runs/browser-1?stream_token=${token}x`)).status).toBe(401);
    expect((await fetch(`${svc.url}/intelligence/runs/browser-1?stream_token=${token}`)).status).toBe(200);
  });
});

describe('CORS off by default', () => {
  it('answers no preflight and names no origin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-nocors-'));
    const svc = await startService(loadConfig({ port: '0', 'data-dir': dir }, {}));
    try {
      const res = await fetch(svc.url + '/datasets', { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      const get = await fetch(svc.url + '/datasets', { headers: { origin: ORIGIN, 'x-api-key': svc.createdAdminKey! } });
      expect(get.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a setting that is not a list of origins', () => {
    expect(() => loadConfig({ 'cors-origins': 'http://ok.test, https://x.test/path' }, {})).toThrow(/'https:\/\/x.test\/path' is not an origin/);
    expect(loadConfig({ 'cors-origins': 'https://a.test, *' }, {}).corsOrigins).toEqual(['https://a.test', '*']);
  });
});

describe('a 500 names its request id', () => {
  it('in the body and the header, the same id', async () => {
    const router = new Router(() => ({ orgId: 'o', role: 'admin', keyId: 'k' }));
    router.add({ method: 'GET', path: '/boom', auth: 'none', summary: 'fails', handler: async () => { throw new TypeError('a bug'); } });
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...a: unknown[]) => errors.push(a);
    try {
      const { response, requestId } = await router.handle({ method: 'GET', path: '/boom', query: new URLSearchParams(), headers: { 'x-request-id': 'op-7' }, body: Buffer.alloc(0), startedAt: 0n });
      expect(response.status).toBe(500);
      expect(requestId).toBe('op-7');
      expect(response.headers!['x-request-id']).toBe('op-7');
      expect(JSON.parse(String(response.body))).toEqual({ error: 'internal', message: 'internal error (request op-7: quote it to the operator, whose log has the cause)', request_id: 'op-7' });
      expect(String((errors[0] as unknown[])[0])).toBe('sable: GET /boom failed: request op-7:');
    } finally {
      console.error = original;
    }
  });
});

describe('start errors name the setting to change', () => {
  it('a taken port, and a data directory that is a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-start-'));
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as { port: number }).port;
    try {
      await expect(startService(loadConfig({ port: String(taken), 'data-dir': join(dir, 'a') }, {}))).rejects.toThrow(`cannot listen on 127.0.0.1:${taken}: the port is taken`);
      await expect(startService(loadConfig({ port: String(taken), 'data-dir': join(dir, 'a') }, {}))).rejects.toThrow('choose another with --port / SABLE_PORT');
      writeFileSync(join(dir, 'file'), 'x');
      await expect(startService(loadConfig({ port: '0', 'data-dir': join(dir, 'file') }, {}))).rejects.toThrow(/data directory .*file cannot be used: it \(or a folder above it\) is a file; choose another with --data-dir/);
      // The service that failed to listen closed what it had opened: the same directory starts.
      const svc = await startService(loadConfig({ port: '0', 'data-dir': join(dir, 'a') }, {}));
      await svc.close();
    } finally {
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
