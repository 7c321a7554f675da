// Hybrid search, the model reranker and embeddings over HTTP, as bodies of tests run against a
// target (./target.ts): test/retrieval/http-hybrid.test.ts and test/retrieval/http-embeddings.test.ts
// run them embedded, test/cluster/contract-three-nodes-2.test.ts on a three-node cluster. The
// upstreams (a Cohere-format reranker, an OpenAI / Cohere embeddings server) listen on 127.0.0.1
// in the test process, which a cluster's nodes reach too; the target is started with `flags`.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import type { ContractTarget, TargetProfile } from './target.js';

const OPENAI_KEY = 'sk-test-openai-0123456789';
const COHERE_KEY = 'co-test-cohere-9876543210';

export interface RetrievalUpstreams {
  /** loadConfig's flags that point the service at these upstreams (and bound its calls). */
  flags: Record<string, string>;
  /** The embeddings server's URL (for a managed inference server of its own). */
  url: string;
  rerank: { mode: 'ok' | '429' | '500'; seenKey: string };
  /** `fail` scripts failures of the embeddings server; `requests` is what it was sent. */
  embed: { fail: { status: number; times: number; echoKey?: boolean; hang?: boolean } | null; requests: { path: string; auth: string | undefined; body: Record<string, unknown> }[] };
  close(): Promise<void>;
}

function vectorOf(text: string, dim: number): number[] {
  return Array.from({ length: dim }, (_, i) => (i === 0 ? text.length : i === 1 ? text.charCodeAt(0) || 0 : 0.5));
}

/**
 * A local reranker speaking the Cohere format (documents containing "pasta" rank first), and a
 * local server speaking the OpenAI embeddings and Cohere v2 embed formats (vectors a deterministic
 * function of the text: its length and first character).
 */
export async function startRetrievalUpstreams(): Promise<RetrievalUpstreams> {
  const up = { rerank: { mode: 'ok', seenKey: '' }, embed: { fail: null, requests: [] } } as Pick<RetrievalUpstreams, 'rerank' | 'embed'>;
  const reranker: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      up.rerank.seenKey = req.headers.authorization ?? '';
      const mode = up.rerank.mode;
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
  const provider: Server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      up.embed.requests.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      const fail = up.embed.fail;
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
  const listen = async (s: Server) => {
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  const rerankUrl = await listen(reranker);
  const url = await listen(provider);
  return {
    ...up,
    url,
    flags: {
      'rerank-provider': 'cohere', 'rerank-url': rerankUrl, 'rerank-timeout-ms': '1000',
      'openai-url': `${url}/v1`, 'cohere-url': url, 'embeddings-compatible-url': `${url}/v1`,
      'embeddings-timeout-ms': '300', 'embeddings-retries': '2', 'embeddings-backoff-ms': '10',
    },
    async close() {
      reranker.closeAllConnections();
      provider.closeAllConnections();
      await Promise.all([reranker, provider].map((s) => new Promise((r) => s.close(r))));
    },
  };
}

/** A JSON client of a target for one key. */
function jsonClient(t: () => ContractTarget, key: () => string) {
  const call = async (method: string, path: string, body?: unknown, as = key()) => {
    const res = await fetch(t().url() + path, {
      method,
      headers: { 'x-api-key': as, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  return call;
}

/** Registers the hybrid search and reranker tests in the calling describe; `t` and `up` are read once its beforeAll has run. */
export function hybridSuite(_profile: TargetProfile, t: () => ContractTarget, up: () => RetrievalUpstreams): void {
  let key: string;
  let base: string;
  const call = jsonClient(t, () => key);
  const post = (path: string, body: unknown, method = 'POST') => call(method, path, body);

  beforeAll(async () => {
    // An organization of its own: a target may serve other suites' datasets in its first one.
    key = (await t().newKey('hybrid', 'admin')).key;
    const ds = (await post('/datasets', { name: 'recipes', dim: 2, metric: 'cosine', hybrid: true })).body;
    base = `/datasets/${ds.id}`;
    await post(`${base}/ensure-engine`, {});
    await t().settle(ds.id, key);
    const inserted = await post(`${base}/insert`, { vectors: [
      { id: 1, values: [1, 0], metadata: { text: 'tomato soup with basil', kind: 'soup' } },
      { id: 2, values: [0.9, 0.1], metadata: { text: 'creamy mushroom soup', kind: 'soup' } },
      { id: 3, values: [0, 1], metadata: { text: 'fresh pasta with tomato sauce', kind: 'main' } },
      { id: 4, values: [0.1, 0.9], metadata: { text: 'grilled fish', kind: 'main' } },
    ] });
    expect(inserted.status, JSON.stringify(inserted.body)).toBe(200);
  }, 60_000);

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
    const rerank = up().rerank;
    const put = await post(`/org-secrets/${encodeURIComponent('rerank:cohere:api_key')}`, { value: 'ck-secret-1' }, 'PUT');
    expect(put.status).toBe(201);
    rerank.mode = 'ok';
    const r = await post(`${base}/search`, { query: [1, 0], sparse_query: 'soup', hybrid: false, top_k: 4, rerank: { top_n: 3 } });
    expect(r.status).toBe(200);
    expect(rerank.seenKey).toBe('Bearer ck-secret-1');
    expect(r.body.rerank).toMatchObject({ applied: true, provider: 'cohere' });
    expect(r.body.results[0].id).toBe(3);
    expect(r.body.results[0].rerank_score).toBeCloseTo(0.9, 6);
    for (const failure of ['429', '500'] as const) {
      rerank.mode = failure;
      const failed = await post(`${base}/search`, { query: [1, 0], sparse_query: 'soup', hybrid: false, top_k: 4, rerank: { enabled: true, top_n: 3 } });
      expect(failed.status).toBe(200);
      expect(failed.body.rerank.applied).toBe(false);
      expect(failed.body.rerank.reason).toBe(failure === '429' ? 'rate_limited' : 'upstream_error');
      expect(failed.body.results.map((h: { id: number }) => h.id)).toEqual([1, 2, 4]);
      expect(JSON.stringify(failed.body)).not.toContain('ck-secret-1');
    }
    rerank.mode = 'ok';
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

  it('hybrid search: top_k 5 is the first five of top_k 20 (fusion normalises over a candidate pool of the same depth)', async () => {
    const ok = async (path: string, body: unknown) => {
      const res = await post(path, body);
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      return res.body;
    };
    const ds = await ok('/datasets', { name: 'depth', dim: 8, metric: 'cosine', hybrid: true });
    await ok(`/datasets/${ds.id}/ensure-engine`, {});
    await t().settle(ds.id, key);
    // A fixed pseudo-random corpus: vectors and texts over a small vocabulary, so dense and keyword disagree.
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const words = ['apple', 'river', 'stone', 'cloud', 'lamp', 'field', 'glass', 'tower', 'bread', 'wind'];
    const vectors = Array.from({ length: 200 }, (_, i) => ({
      id: i + 1,
      values: Array.from({ length: 8 }, () => rand() * 2 - 1),
      metadata: { text: Array.from({ length: 6 }, () => words[Math.floor(rand() * words.length)]).join(' ') },
    }));
    await ok(`/datasets/${ds.id}/insert`, { vectors });
    for (let q = 0; q < 20; q++) {
      const query = { query: Array.from({ length: 8 }, () => rand() * 2 - 1), sparse_query: `${words[q % 10]} ${words[(q * 3 + 1) % 10]}`, hybrid: true, alpha: 0.5 };
      const five = await ok(`/datasets/${ds.id}/search`, { ...query, top_k: 5 });
      const twenty = await ok(`/datasets/${ds.id}/search`, { ...query, top_k: 20 });
      expect(five.results.map((r: { id: number }) => r.id)).toEqual(twenty.results.slice(0, 5).map((r: { id: number }) => r.id));
    }
  });
}

/** Registers the embeddings tests in the calling describe; `t` and `up` are read once its beforeAll has run. */
export function embeddingsSuite(profile: TargetProfile, t: () => ContractTarget, up: () => RetrievalUpstreams): void {
  const can = (c: Parameters<typeof profile.can.has>[0]) => profile.can.has(c);
  let key: string;
  const call = jsonClient(t, () => key);
  const dataset = async (name: string, embedding?: unknown, extra: Record<string, unknown> = {}) => {
    const ds = (await call('POST', '/datasets', { name, ...(embedding ? { embedding } : {}), ...extra })).body;
    await call('POST', `/datasets/${ds.id}/ensure-engine`, {});
    await t().settle(ds.id, key);
    return ds as { id: string; dim: number; embedding: { provider: string; model: string } };
  };

  beforeAll(async () => {
    // An organization of its own: its organization secrets are this suite's alone.
    key = (await t().newKey('embeddings', 'admin')).key;
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
    // The query cache and the metrics are kept per process: both searches and the metrics go to one
    // URL (on a cluster, one node; the target rotates otherwise).
    const url = t().url();
    const at = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(url + path, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, text: await res.text() };
    };
    const q = { query_text: 'a question asked twice', top_k: 1 };
    expect((await at('POST', `/datasets/${ds.id}/search`, q)).status).toBe(200);
    expect((await at('POST', `/datasets/${ds.id}/search`, q)).status).toBe(200);
    const metrics = (await at('GET', '/metrics')).text;
    expect(metrics).toMatch(/sable_embedded_texts_total\{provider="local",cached="true"\} [1-9]/);
    expect(metrics).toMatch(/sable_embedded_texts_total\{provider="local",cached="false"\} [1-9]/);
  });

  it('calls OpenAI with the organization secret, placing vectors by index', async () => {
    const embed = up().embed;
    const ds = await dataset('oa', { provider: 'openai', model: 'text-embedding-3-small' });
    expect(ds.dim).toBe(1536);
    const missing = await call('POST', `/datasets/${ds.id}/embed`, { text: 'hello' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('/org-secrets/emb%3Aopenai%3Aapi_key');
    expect((await call('PUT', `/org-secrets/${encodeURIComponent('emb:openai:api_key')}`, { value: OPENAI_KEY })).status).toBe(201);
    embed.requests = [];
    const r = await call('POST', `/datasets/${ds.id}/embed`, { texts: ['a', 'bbb'] });
    expect(r.status).toBe(200);
    expect(r.body.embeddings.map((v: number[]) => v[0])).toEqual([1, 3]);
    expect(embed.requests[0]).toMatchObject({ path: '/v1/embeddings', auth: `Bearer ${OPENAI_KEY}`, body: { model: 'text-embedding-3-small', input: ['a', 'bbb'] } });
  });

  it('retries 429 and 5xx with backoff, then reports the provider error without the key', async () => {
    const embed = up().embed;
    const ds = await dataset('oa2', { provider: 'openai', model: 'text-embedding-3-small' });
    embed.fail = { status: 429, times: 2 };
    embed.requests = [];
    expect((await call('POST', `/datasets/${ds.id}/embed`, { text: 'x' })).status).toBe(200);
    expect(embed.requests).toHaveLength(3);

    embed.fail = { status: 500, times: 10 };
    embed.requests = [];
    const down = await call('POST', `/datasets/${ds.id}/embed`, { text: 'x' });
    expect(down.status).toBe(502);
    expect(down.body).toMatchObject({ error: 'upstream_error' });
    expect(down.body.message).toMatch(/openai embeddings returned HTTP 500: scripted 500 \(after 3 attempts\)/);
    expect(embed.requests).toHaveLength(3);

    embed.fail = { status: 401, times: 10, echoKey: true };
    embed.requests = [];
    const bad = await call('POST', `/datasets/${ds.id}/embed`, { text: 'x' });
    expect(bad.status).toBe(502);
    expect(embed.requests).toHaveLength(1); // a 401 is not retried
    expect(bad.body.message).toContain('[redacted]');
    expect(bad.body.message).not.toContain(OPENAI_KEY);

    embed.fail = { status: 200, times: 3, hang: true };
    const slow = await call('POST', `/datasets/${ds.id}/embed`, { text: 'x' });
    expect(slow.status).toBe(502);
    expect(slow.body.message).toMatch(/timed out after 300 ms/);
    embed.fail = null;
  });

  it('calls Cohere v2 with search_document for /embed and search_query for query_text', async () => {
    const embed = up().embed;
    const ds = await dataset('co', { provider: 'cohere', model: 'embed-english-v3.0', secret_ref: 'emb:cohere:team' });
    expect(ds.dim).toBe(1024);
    await call('PUT', `/org-secrets/${encodeURIComponent('emb:cohere:team')}`, { value: COHERE_KEY });
    embed.requests = [];
    expect((await call('POST', `/datasets/${ds.id}/embed`, { texts: ['one', 'two'] })).status).toBe(200);
    expect((await call('POST', `/datasets/${ds.id}/search`, { query_text: 'three', top_k: 1 })).status).toBe(200);
    expect(embed.requests.map((r) => [r.path, r.auth, r.body.input_type])).toEqual([
      ['/v2/embed', `Bearer ${COHERE_KEY}`, 'search_document'],
      ['/v2/embed', `Bearer ${COHERE_KEY}`, 'search_query'],
    ]);
  });

  it('reaches an OpenAI-compatible server without a key, checks dimensions, refuses unconfigured providers', async () => {
    const embed = up().embed;
    const ds = await dataset('compat', { provider: 'openai-compatible', model: 'nomic-embed-text', dim: 8 });
    embed.requests = [];
    const r = await call('POST', `/datasets/${ds.id}/embed`, { text: 'hi' });
    expect(r.status).toBe(200);
    expect(embed.requests[0].auth).toBeUndefined();
    const wrong = await dataset('compat16', { provider: 'openai-compatible', model: 'nomic-embed-text', dim: 16 });
    const mismatch = await call('POST', `/datasets/${wrong.id}/embed`, { text: 'hi' });
    expect(mismatch.status).toBe(502);
    expect(mismatch.body.message).toMatch(/returned 8 dimensions; the dataset has 16/);
    // query_text overrides: another model of the same provider.
    const other = await call('POST', `/datasets/${ds.id}/search`, { query_text: 'hi', embedding_model: 'other-model', top_k: 1 });
    expect(other.status).toBe(200);
    expect(embed.requests.at(-1)!.body.model).toBe('other-model');
    expect((await call('POST', '/datasets', { name: 'm', embedding: { provider: 'managed' } })).status).toBe(400);
  });

  // own-service: the managed default is a setting of the whole service (every new dataset of every
  // organization follows it), so the test needs a second service started with it.
  it.skipIf(!can('own-service'))('with a managed inference server configured, new datasets default to the managed model', async () => {
    const embed = up().embed;
    const managed = await t().startOwn!({ 'managed-embeddings-url': `${up().url}/v1` });
    try {
      const req = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(managed.url + path, { method, headers: { 'x-api-key': managed.admin, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: res.status, body: await res.json() };
      };
      const ds = (await req('POST', '/datasets', { name: 'm' })).body;
      expect(ds).toMatchObject({ dim: 2560, embedding: { provider: 'managed', model: 'default' } });
      const small = (await req('POST', '/datasets', { name: 's', embedding: { model: 'small' } })).body;
      expect(small.dim).toBe(768);
      await req('POST', `/datasets/${ds.id}/ensure-engine`, {});
      embed.requests = [];
      const r = await req('POST', `/datasets/${ds.id}/embed`, { text: 'hello' });
      expect(r.status).toBe(200);
      expect(r.body.embeddings[0]).toHaveLength(2560);
      expect(embed.requests[0]).toMatchObject({ path: '/v1/embeddings', auth: undefined, body: { model: 'default', input: ['hello'] } });
    } finally {
      await managed.close();
    }
  });
}
