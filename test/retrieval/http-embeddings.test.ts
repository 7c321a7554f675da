import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';

const OPENAI_KEY = 'sk-test-openai-0123456789';
const COHERE_KEY = 'co-test-cohere-9876543210';

// A local server speaking the OpenAI embeddings and Cohere v2 embed formats. Vectors are a
// deterministic function of the text (its length and first character), `fail` scripts failures.
let fail: { status: number; times: number; echoKey?: boolean; hang?: boolean } | null = null;
let requests: { path: string; auth: string | undefined; body: Record<string, unknown> }[] = [];
function vectorOf(text: string, dim: number): number[] {
  return Array.from({ length: dim }, (_, i) => (i === 0 ? text.length : i === 1 ? text.charCodeAt(0) || 0 : 0.5));
}
const provider: Server = createServer((req: IncomingMessage, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    const body = JSON.parse(raw) as Record<string, unknown>;
    requests.push({ path: req.url ?? '', auth: req.headers.authorization, body });
    if (fail && fail.times > 0) {
      fail.times--;
      if (fail.hang) return; // never answers: the client's timeout must end it
      res.writeHead(fail.status, { 'content-type': 'application/json' });
      const message = fail.echoKey ? `invalid key ${req.headers.authorization?.slice(7)}` : `scripted ${fail.status}`;
      res.end(JSON.stringify(req.url === '/v2/embed' ? { message } : { error: { message, type: 'invalid_request_error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/v1/embeddings') {
      const input = body.input as string[];
      const dims: Record<string, number> = { 'text-embedding-3-small': 1536, default: 2560, large: 2560, small: 768 };
      const dim = dims[body.model as string] ?? 8;
      // Out of order on purpose: clients must place vectors by `index`.
      const data = input.map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(t, dim) })).reverse();
      res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
    } else if (req.url === '/v2/embed') {
      const texts = body.texts as string[];
      res.end(JSON.stringify({ id: 'e1', embeddings: { float: texts.map((t) => vectorOf(t, 1024)) }, texts, meta: {} }));
    } else {
      res.writeHead(404).end();
    }
  });
});

describe('embeddings over HTTP: the local model, external providers, secrets', () => {
  let dir: string;
  let svc: Service;
  let key: string;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(svc.url + path, {
      method,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const dataset = async (name: string, embedding?: unknown, extra: Record<string, unknown> = {}) => {
    const ds = (await call('POST', '/datasets', { name, ...(embedding ? { embedding } : {}), ...extra })).body;
    await call('POST', `/datasets/${ds.id}/ensure-engine`, {});
    return ds as { id: string; dim: number; embedding: { provider: string; model: string } };
  };

  beforeAll(async () => {
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'sable-embed-'));
    svc = await startService(loadConfig({
      port: '0', 'data-dir': dir,
      'openai-url': `${url}/v1`, 'cohere-url': url, 'embeddings-compatible-url': `${url}/v1`,
      'embeddings-timeout-ms': '300', 'embeddings-retries': '2', 'embeddings-backoff-ms': '10',
    }, {}));
    key = svc.createdAdminKey!;
  });
  afterAll(async () => {
    await svc.close();
    provider.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a dataset on the local model, embeds texts and searches them by query_text', async () => {
    const ds = await dataset('docs', undefined, { hybrid: true });
    expect(ds).toMatchObject({ dim: 384, embedding: { provider: 'local', model: 'all-minilm-l6-v2' } });
    const texts = [
      'To deploy to Cloud Foundry, create an HTML5 repository service instance.',
      'Pasta should be cooked in plenty of salted boiling water.',
      'The ABAP deployment artifact is a zipped dist folder.',
      'Cats sleep for most of the day.',
    ];
    const embedded = await call('POST', `/datasets/${ds.id}/embed`, { texts });
    expect(embedded.status).toBe(200);
    expect(embedded.body).toMatchObject({ provider: 'local', model: 'all-minilm-l6-v2', dim: 384 });
    expect(embedded.body.embeddings).toHaveLength(4);
    expect(embedded.body.embeddings[0]).toHaveLength(384);
    const single = await call('POST', `/datasets/${ds.id}/embed`, { text: texts[1] });
    expect(single.body.embeddings[0][0]).toBeCloseTo(embedded.body.embeddings[1][0], 5);

    const inserted = await call('POST', `/datasets/${ds.id}/insert`, {
      vectors: texts.map((text, i) => ({ id: i + 1, values: embedded.body.embeddings[i], metadata: { text } })),
    });
    expect(inserted.status).toBe(200);
    const found = await call('POST', `/datasets/${ds.id}/search`, { query_text: 'how do I cook spaghetti?', top_k: 2 });
    expect(found.status).toBe(200);
    expect(found.body.results[0].id).toBe(2);
    // Hybrid with query_text and no sparse_query: the same text is the keyword query.
    const hybrid = await call('POST', `/datasets/${ds.id}/search`, { query_text: 'ABAP deployment artifact', top_k: 2, hybrid: true });
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.results[0]).toMatchObject({ id: 3 });
    expect(hybrid.body.results[0].keyword_score).toBeGreaterThan(0);
    // Texts without values are embedded on insert.
    const byText = await call('POST', `/datasets/${ds.id}/insert`, { vectors: [{ id: 'note-5', metadata: { text: 'Dogs love long walks in the park.' } }] });
    expect(byText.body).toEqual({ inserted: 1, embedded: 1 });
    const dog = await call('POST', `/datasets/${ds.id}/search`, { query_text: 'which pet needs walking?', top_k: 1 });
    expect(dog.body.results[0]).toMatchObject({ external_id: 'note-5' });
    expect((await call('POST', `/datasets/${ds.id}/insert`, { vectors: [{ id: 6 }] })).status).toBe(400);
    expect((await call('POST', `/datasets/${ds.id}/insert`, { vectors: [{ id: 6, metadata: { text: '' } }] })).status).toBe(400);
    expect((await call('POST', `/datasets/${ds.id}/search`, { query: embedded.body.embeddings[0], query_text: 'x' })).status).toBe(400);
    expect((await call('POST', `/datasets/${ds.id}/search`, { query_text: '  ' })).status).toBe(400);
    expect((await call('POST', `/datasets/${ds.id}/embed`, {})).status).toBe(400);
    expect((await call('POST', `/datasets/${ds.id}/embed`, { texts: [] })).status).toBe(400);
  });

  it('answers a repeated query_text from the cache, and counts embeddings in /metrics', async () => {
    const ds = await dataset('cached');
    const q = { query_text: 'a question asked twice', top_k: 1 };
    await call('POST', `/datasets/${ds.id}/search`, q);
    await call('POST', `/datasets/${ds.id}/search`, q);
    const metrics = (await call('GET', '/metrics')).body as string;
    expect(metrics).toMatch(/sable_embedded_texts_total\{provider="local",cached="true"\} [1-9]/);
    expect(metrics).toMatch(/sable_embedded_texts_total\{provider="local",cached="false"\} [1-9]/);
  });

  it('calls OpenAI with the organization secret, placing vectors by index', async () => {
    const ds = await dataset('oa', { provider: 'openai', model: 'text-embedding-3-small' });
    expect(ds.dim).toBe(1536);
    const missing = await call('POST', `/datasets/${ds.id}/embed`, { text: 'hello' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('/org-secrets/emb%3Aopenai%3Aapi_key');
    expect((await call('PUT', `/org-secrets/${encodeURIComponent('emb:openai:api_key')}`, { value: OPENAI_KEY })).status).toBe(201);
    requests = [];
    const r = await call('POST', `/datasets/${ds.id}/embed`, { texts: ['a', 'bbb'] });
    expect(r.status).toBe(200);
    expect(r.body.embeddings.map((v: number[]) => v[0])).toEqual([1, 3]);
    expect(requests[0]).toMatchObject({ path: '/v1/embeddings', auth: `Bearer ${OPENAI_KEY}`, body: { model: 'text-embedding-3-small', input: ['a', 'bbb'] } });
  });

  it('retries 429 and 5xx with backoff, then reports the provider error without the key', async () => {
    const ds = await dataset('oa2', { provider: 'openai', model: 'text-embedding-3-small' });
    fail = { status: 429, times: 2 };
    requests = [];
    expect((await call('POST', `/datasets/${ds.id}/embed`, { text: 'x' })).status).toBe(200);
    expect(requests).toHaveLength(3);

    fail = { status: 500, times: 10 };
    requests = [];
    const down = await call('POST', `/datasets/${ds.id}/embed`, { text: 'x' });
    expect(down.status).toBe(502);
    expect(down.body).toMatchObject({ error: 'upstream_error' });
    expect(down.body.message).toMatch(/openai embeddings returned HTTP 500: scripted 500 \(after 3 attempts\)/);
    expect(requests).toHaveLength(3);

    fail = { status: 401, times: 10, echoKey: true };
    requests = [];
    const bad = await call('POST', `/datasets/${ds.id}/embed`, { text: 'x' });
    expect(bad.status).toBe(502);
    expect(requests).toHaveLength(1); // a 401 is not retried
    expect(bad.body.message).toContain('[redacted]');
    expect(bad.body.message).not.toContain(OPENAI_KEY);

    fail = { status: 200, times: 3, hang: true };
    const slow = await call('POST', `/datasets/${ds.id}/embed`, { text: 'x' });
    expect(slow.status).toBe(502);
    expect(slow.body.message).toMatch(/timed out after 300 ms/);
    fail = null;
  });

  it('calls Cohere v2 with search_document for /embed and search_query for query_text', async () => {
    const ds = await dataset('co', { provider: 'cohere', model: 'embed-english-v3.0', secret_ref: 'emb:cohere:team' });
    expect(ds.dim).toBe(1024);
    await call('PUT', `/org-secrets/${encodeURIComponent('emb:cohere:team')}`, { value: COHERE_KEY });
    requests = [];
    expect((await call('POST', `/datasets/${ds.id}/embed`, { texts: ['one', 'two'] })).status).toBe(200);
    expect((await call('POST', `/datasets/${ds.id}/search`, { query_text: 'three', top_k: 1 })).status).toBe(200);
    expect(requests.map((r) => [r.path, r.auth, r.body.input_type])).toEqual([
      ['/v2/embed', `Bearer ${COHERE_KEY}`, 'search_document'],
      ['/v2/embed', `Bearer ${COHERE_KEY}`, 'search_query'],
    ]);
  });

  it('reaches an OpenAI-compatible server without a key, checks dimensions, refuses unconfigured providers', async () => {
    const ds = await dataset('compat', { provider: 'openai-compatible', model: 'nomic-embed-text', dim: 8 });
    requests = [];
    const r = await call('POST', `/datasets/${ds.id}/embed`, { text: 'hi' });
    expect(r.status).toBe(200);
    expect(requests[0].auth).toBeUndefined();
    const wrong = await dataset('compat16', { provider: 'openai-compatible', model: 'nomic-embed-text', dim: 16 });
    const mismatch = await call('POST', `/datasets/${wrong.id}/embed`, { text: 'hi' });
    expect(mismatch.status).toBe(502);
    expect(mismatch.body.message).toMatch(/returned 8 dimensions; the dataset has 16/);
    // query_text overrides: another model of the same provider.
    const other = await call('POST', `/datasets/${ds.id}/search`, { query_text: 'hi', embedding_model: 'other-model', top_k: 1 });
    expect(other.status).toBe(200);
    expect(requests.at(-1)!.body.model).toBe('other-model');
    expect((await call('POST', '/datasets', { name: 'm', embedding: { provider: 'managed' } })).status).toBe(400);
  });

  it('with a managed inference server configured, new datasets default to the managed model', async () => {
    const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    const managedDir = mkdtempSync(join(tmpdir(), 'sable-managed-'));
    const managed = await startService(loadConfig({ port: '0', 'data-dir': managedDir, 'managed-embeddings-url': `${url}/v1` }, {}));
    try {
      const k = managed.createdAdminKey!;
      const req = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(managed.url + path, { method, headers: { 'x-api-key': k, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
        return { status: res.status, body: await res.json() };
      };
      const ds = (await req('POST', '/datasets', { name: 'm' })).body;
      expect(ds).toMatchObject({ dim: 2560, embedding: { provider: 'managed', model: 'default' } });
      const small = (await req('POST', '/datasets', { name: 's', embedding: { model: 'small' } })).body;
      expect(small.dim).toBe(768);
      await req('POST', `/datasets/${ds.id}/ensure-engine`, {});
      requests = [];
      const r = await req('POST', `/datasets/${ds.id}/embed`, { text: 'hello' });
      expect(r.status).toBe(200);
      expect(r.body.embeddings[0]).toHaveLength(2560);
      expect(requests[0]).toMatchObject({ path: '/v1/embeddings', auth: undefined, body: { model: 'default', input: ['hello'] } });
    } finally {
      await managed.close();
      rmSync(managedDir, { recursive: true, force: true });
    }
  });
});
