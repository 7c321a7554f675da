import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';

// A local reranker speaking the Cohere format: documents containing "pasta" rank first.
let mode: 'ok' | '429' | '500' = 'ok';
let seenKey = '';
const reranker: Server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    seenKey = req.headers.authorization ?? '';
    if (mode !== 'ok') {
      res.writeHead(mode === '429' ? 429 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: mode === '429' ? 'slow down' : 'boom' }));
      return;
    }
    const { documents } = JSON.parse(body) as { documents: string[] };
    const results = documents.map((d, index) => ({ index, relevance_score: d.includes('pasta') ? 0.9 : 0.1 }))
      .sort((a, b) => b.relevance_score - a.relevance_score);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'x', results }));
  });
});

describe('hybrid search and the model reranker over HTTP', () => {
  let dir: string;
  let svc: Service;
  let key: string;
  let base: string;
  const post = async (path: string, body: unknown, method = 'POST') => {
    const res = await fetch(svc.url + path, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };

  beforeAll(async () => {
    await new Promise<void>((r) => reranker.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(reranker.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'sable-hybrid-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'rerank-provider': 'cohere', 'rerank-url': url, 'rerank-timeout-ms': '1000' }, {}));
    key = svc.createdAdminKey!;
    const ds = (await post('/datasets', { name: 'recipes', dim: 2, metric: 'cosine', hybrid: true })).body;
    base = `/datasets/${ds.id}`;
    await post(`${base}/ensure-engine`, {});
    await post(`${base}/insert`, { vectors: [
      { id: 1, values: [1, 0], metadata: { text: 'tomato soup with basil', kind: 'soup' } },
      { id: 2, values: [0.9, 0.1], metadata: { text: 'creamy mushroom soup', kind: 'soup' } },
      { id: 3, values: [0, 1], metadata: { text: 'fresh pasta with tomato sauce', kind: 'main' } },
      { id: 4, values: [0.1, 0.9], metadata: { text: 'grilled fish', kind: 'main' } },
    ] });
  });
  afterAll(async () => {
    await svc.close();
    reranker.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fuses dense and keyword scores and shows both contributions', async () => {
    const r = await post(`${base}/search`, { query: [1, 0], sparse_query: 'pasta tomato', top_k: 4, alpha: 0.5 });
    expect(r.status).toBe(200);
    const ids = r.body.results.map((h: { id: number }) => h.id);
    // Pure vector would rank 1, 2, 4, 3; the keywords lift 3 (pasta, tomato) above 2 and 4.
    expect(ids[0]).toBe(1);
    expect(ids.indexOf(3)).toBeLessThan(ids.indexOf(2));
    const hit3 = r.body.results.find((h: { id: number }) => h.id === 3);
    expect(hit3.keyword_score).toBeGreaterThan(0);
    expect(hit3.keyword_contribution).toBeCloseTo(0.5, 6);
    expect(hit3.score).toBeCloseTo(1 - hit3.dense_contribution - hit3.keyword_contribution, 6);
    for (let i = 1; i < r.body.results.length; i++) expect(r.body.results[i].score).toBeGreaterThanOrEqual(r.body.results[i - 1].score);
    // alpha 1 is pure vector; alpha 0 pure keyword.
    const dense = await post(`${base}/search`, { query: [1, 0], sparse_query: 'pasta', top_k: 4, alpha: 1 });
    expect(dense.body.results.map((h: { id: number }) => h.id)).toEqual([1, 2, 4, 3]);
    const words = await post(`${base}/search`, { query: [1, 0], sparse_query: 'mushroom', top_k: 1, alpha: 0 });
    expect(words.body.results[0].id).toBe(2);
    // Filters apply to both sides.
    const soups = await post(`${base}/search`, { query: [0, 1], sparse_query: 'tomato', filters: { kind: 'soup' }, top_k: 4 });
    expect(soups.body.results.map((h: { id: number }) => h.id).sort()).toEqual([1, 2]);
    // The dataset's alpha applies when the query sends none.
    await post(`${base}/hybrid/alpha`, { alpha: 0 }, 'PUT');
    const byDataset = await post(`${base}/search`, { query: [1, 0], sparse_query: 'grilled fish', top_k: 1 });
    expect(byDataset.body.results[0].id).toBe(4);
    expect((await post(`${base}/search`, { query: [1, 0], hybrid: true })).status).toBe(400);
    // Text is searchable as keywords right after an update, and deletes leave the keyword index.
    await post(`${base}/insert`, { vectors: [{ id: 4, values: [0.1, 0.9], metadata: { text: 'lemon tart', kind: 'dessert' } }] });
    expect((await post(`${base}/search`, { sparse_query: 'lemon', hybrid: true, top_k: 1 })).body.results[0].id).toBe(4);
    await post(`${base}/vectors`, { ids: [4] }, 'DELETE');
    expect((await post(`${base}/search`, { sparse_query: 'lemon', hybrid: true })).body.results).toEqual([]);
    await post(`${base}/hybrid/alpha`, { alpha: 0.5 }, 'PUT');
    await post(`${base}/insert`, { vectors: [{ id: 4, values: [0.1, 0.9], metadata: { text: 'grilled fish', kind: 'main' } }] });
  });

  it('reranks through the HTTP provider with the organization secret, and fails open', async () => {
    const put = await fetch(`${svc.url}/org-secrets/${encodeURIComponent('rerank:cohere:api_key')}`, {
      method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ value: 'ck-secret-1' }),
    });
    expect(put.status).toBe(201);
    mode = 'ok';
    const r = await post(`${base}/search`, { query: [1, 0], sparse_query: 'soup', hybrid: false, top_k: 4, rerank: { top_n: 3 } });
    expect(r.status).toBe(200);
    expect(seenKey).toBe('Bearer ck-secret-1');
    expect(r.body.rerank).toMatchObject({ applied: true, provider: 'cohere' });
    expect(r.body.results[0].id).toBe(3);
    expect(r.body.results[0].rerank_score).toBeCloseTo(0.9, 6);
    for (const failure of ['429', '500'] as const) {
      mode = failure;
      const failed = await post(`${base}/search`, { query: [1, 0], sparse_query: 'soup', hybrid: false, top_k: 4, rerank: { enabled: true, top_n: 3 } });
      expect(failed.status).toBe(200);
      expect(failed.body.rerank.applied).toBe(false);
      expect(failed.body.rerank.reason).toBe(failure === '429' ? 'rate_limited' : 'upstream_error');
      expect(failed.body.results.map((h: { id: number }) => h.id)).toEqual([1, 2, 4]);
      expect(JSON.stringify(failed.body)).not.toContain('ck-secret-1');
    }
    mode = 'ok';
    const local = await post(`${base}/search`, { query: [1, 0], sparse_query: 'fish', hybrid: false, top_k: 4, rerank: { provider: 'local', top_n: 3 } });
    expect(local.body.rerank).toMatchObject({ applied: true, provider: 'local' });
    expect(local.body.results[0].id).toBe(4);
    const noText = await post(`${base}/search`, { query: [1, 0], rerank: true });
    expect(noText.body.rerank).toMatchObject({ applied: false, reason: 'no_query_text' });
    expect((await post(`${base}/search`, { query: [1, 0], rerank: { top_n: 0 } })).status).toBe(400);
    // An unknown provider is a provider problem: fail-open answers 200 in the search's order, fail_open: false a 400.
    const unknown = await post(`${base}/search`, { query: [1, 0], sparse_query: 'soup', hybrid: false, top_k: 4, rerank: { provider: 'voyage', top_n: 3 } });
    expect(unknown.status).toBe(200);
    expect(unknown.body.rerank).toMatchObject({ applied: false, reason: 'unknown_provider', provider: 'voyage' });
    expect(unknown.body.results.map((h: { id: number }) => h.id)).toEqual(noText.body.results.slice(0, unknown.body.results.length).map((h: { id: number }) => h.id));
    const strict = await post(`${base}/search`, { query: [1, 0], rerank: { provider: 'voyage', fail_open: false } });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain("'voyage' is not configured");
  });
});

describe('hybrid search: the order of the first hits does not depend on top_k', () => {
  let dir: string;
  let svc: Service;
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('top_k 5 is the first five of top_k 20 (fusion normalises over a candidate pool of the same depth)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-hybrid-depth-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir }, {}));
    const call = async (path: string, body: unknown) => {
      const res = await fetch(svc.url + path, { method: 'POST', headers: { 'x-api-key': svc.createdAdminKey!, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const out = await res.json();
      expect(res.status, JSON.stringify(out)).toBeLessThan(300);
      return out;
    };
    const ds = await call('/datasets', { name: 'depth', dim: 8, metric: 'cosine', hybrid: true });
    await call(`/datasets/${ds.id}/ensure-engine`, {});
    // A fixed pseudo-random corpus: vectors and texts over a small vocabulary, so dense and keyword disagree.
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const words = ['apple', 'river', 'stone', 'cloud', 'lamp', 'field', 'glass', 'tower', 'bread', 'wind'];
    const vectors = Array.from({ length: 200 }, (_, i) => ({
      id: i + 1,
      values: Array.from({ length: 8 }, () => rand() * 2 - 1),
      metadata: { text: Array.from({ length: 6 }, () => words[Math.floor(rand() * words.length)]).join(' ') },
    }));
    await call(`/datasets/${ds.id}/insert`, { vectors });
    for (let q = 0; q < 20; q++) {
      const query = { query: Array.from({ length: 8 }, () => rand() * 2 - 1), sparse_query: `${words[q % 10]} ${words[(q * 3 + 1) % 10]}`, hybrid: true, alpha: 0.5 };
      const five = await call(`/datasets/${ds.id}/search`, { ...query, top_k: 5 });
      const twenty = await call(`/datasets/${ds.id}/search`, { ...query, top_k: 20 });
      expect(five.results.map((r: { id: number }) => r.id)).toEqual(twenty.results.slice(0, 5).map((r: { id: number }) => r.id));
    }
  });
});
