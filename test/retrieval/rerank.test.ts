import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { errorResponse } from '../../dist/control-plane/http/status.js';
import { compileBody } from '../../dist/contract/validation.js';
import { SearchRequest } from '../../dist/retrieval/requests.js';
import { SableError } from '../../dist/errors/codes.js';
import { HttpRerankProvider } from '../../dist/retrieval/rerank/http-provider.js';
import { LocalRerankProvider } from '../../dist/retrieval/rerank/local-provider.js';
import { parseRerankOption } from '../../dist/retrieval/rerank/options.js';
import { applyRerank } from '../../dist/retrieval/rerank/rerank.js';
import { RerankError, type RerankCandidate, type RerankOptions, type RerankProvider } from '../../dist/retrieval/rerank/types.js';

const KEY = 'sk-test-7f3a9c-SECRET';
type Mode = 'ok' | '429' | '500' | 'hang' | 'badjson' | 'noresults' | 'badindex' | 'echo_key';

/** A stand-in for Cohere's POST /v1/rerank that rejects anything Cohere would reject. */
class FakeCohere {
  mode: Mode = 'ok';
  requests: { headers: IncomingMessage['headers']; body: any }[] = [];
  server!: Server;
  url = '';

  async start() {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/v1/rerank') return send(404, { message: `no route ${req.method} ${req.url}` });
    if (req.headers.authorization !== `Bearer ${KEY}`) return send(401, { message: 'invalid api token' });
    if (!String(req.headers['content-type']).startsWith('application/json')) return send(415, { message: 'json only' });
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { message: 'invalid json' });
    }
    this.requests.push({ headers: req.headers, body });
    const { model, query, documents, top_n, return_documents } = body;
    if (typeof model !== 'string' || typeof query !== 'string' || !Array.isArray(documents) || !documents.every((d: unknown) => typeof d === 'string')
      || !Number.isInteger(top_n) || top_n < 1 || top_n > documents.length || return_documents !== false) {
      return send(400, { message: 'invalid request body' });
    }
    switch (this.mode) {
      case '429': return send(429, { message: 'rate limited' });
      case '500': return send(500, { message: 'internal server error' });
      case 'hang': return; // never answers; stop() closes the socket
      case 'badjson': return send(200, '{"results": [ {"index": 0, ');
      case 'noresults': return send(200, { id: 'x', meta: {} });
      case 'badindex': return send(200, { results: [{ index: 99, relevance_score: 0.5 }] });
      case 'echo_key': return send(401, { message: `key ${KEY} has been revoked` });
    }
    // Deterministic relevance: the share of query words the document contains.
    const words = query.toLowerCase().split(/\W+/).filter(Boolean);
    const results = documents
      .map((d: string, index: number) => {
        const text = d.toLowerCase();
        return { index, relevance_score: words.filter((w: string) => text.includes(w)).length / Math.max(words.length, 1) };
      })
      .sort((a: any, b: any) => b.relevance_score - a.relevance_score || a.index - b.index)
      .slice(0, top_n);
    send(200, { id: 'req-1', results, meta: { api_version: { version: '1' }, billed_units: { search_units: 1 } } });
  }
}

const never = () => new AbortController().signal;
const cands = (texts: (string | null)[]): RerankCandidate[] => texts.map((text, i) => ({ id: 100 + i, text, score: i / 10 }));
const opts = (o: Partial<RerankOptions> = {}): RerankOptions => ({
  enabled: true, provider: 'cohere', model: '', top_n: 10, max_documents: 100, fail_open: true, ...o,
});

const fake = new FakeCohere();
beforeAll(() => fake.start());
afterAll(() => fake.stop());
beforeEach(() => {
  fake.mode = 'ok';
  fake.requests = [];
});

const cohere = (over: { timeoutMs?: number; baseUrl?: string; key?: string } = {}) =>
  new HttpRerankProvider({ name: 'cohere', baseUrl: over.baseUrl ?? fake.url + '/', apiKey: () => over.key ?? KEY, defaultModel: 'rerank-english-v3.0', timeoutMs: over.timeoutMs ?? 2000 });

async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('HttpRerankProvider', () => {
  it('speaks the Cohere format and returns scores best first', async () => {
    const out = await cohere().rerank('red apple', ['a blue car', 'red apple pie', 'an apple'], 3, 'rerank-english-v3.0', never());
    expect(out).toEqual([{ index: 1, score: 1 }, { index: 2, score: 0.5 }, { index: 0, score: 0 }]);
    const { headers, body } = fake.requests[0];
    expect(headers.authorization).toBe(`Bearer ${KEY}`);
    expect(body).toEqual({ model: 'rerank-english-v3.0', query: 'red apple', documents: ['a blue car', 'red apple pie', 'an apple'], top_n: 3, return_documents: false });
  });

  it('caps top_n at the number of documents', async () => {
    const out = await cohere().rerank('apple', ['apple', 'pear'], 50, 'm', never());
    expect(fake.requests[0].body.top_n).toBe(2);
    expect(out.map((r) => r.index)).toEqual([0, 1]);
  });

  it('classifies 429 as rate_limited with the provider message', async () => {
    fake.mode = '429';
    const e = await rejection(cohere().rerank('q', ['d'], 1, 'm', never()));
    expect(e).toBeInstanceOf(RerankError);
    expect(e.reason).toBe('rate_limited');
    expect(e.httpStatus).toBe(429);
    expect(e.message).toContain('429');
    expect(e.message).toContain('rate limited');
  });

  it('classifies 5xx as upstream_error', async () => {
    fake.mode = '500';
    const e = await rejection(cohere().rerank('q', ['d'], 1, 'm', never()));
    expect(e.reason).toBe('upstream_error');
    expect(e.message).toMatch(/500.*internal server error/);
  });

  it('times out a provider that never answers', async () => {
    fake.mode = 'hang';
    const t0 = Date.now();
    const e = await rejection(cohere({ timeoutMs: 200 }).rerank('q', ['d'], 1, 'm', never()));
    expect(e.reason).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('reports a caller abort as aborted, not timeout', async () => {
    fake.mode = 'hang';
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const e = await rejection(cohere({ timeoutMs: 5000 }).rerank('q', ['d'], 1, 'm', ac.signal));
    expect(e.reason).toBe('aborted');
  });

  it('rejects malformed responses as upstream_error', async () => {
    for (const mode of ['badjson', 'noresults', 'badindex'] as const) {
      fake.mode = mode;
      const e = await rejection(cohere().rerank('q', ['d'], 1, 'm', never()));
      expect(e.reason, mode).toBe('upstream_error');
    }
  });

  it('reports an unreachable endpoint', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    const e = await rejection(cohere({ baseUrl: `http://127.0.0.1:${port}` }).rerank('q', ['d'], 1, 'm', never()));
    expect(e.reason).toBe('unreachable');
    expect(e.message).toContain('ECONNREFUSED');
  });

  it('never puts the key in an error message, even when the provider echoes it', async () => {
    fake.mode = 'echo_key';
    const e = await rejection(cohere().rerank('q', ['d'], 1, 'm', never()));
    expect(e.message).toContain('401');
    expect(e.message).toContain('[redacted]');
    expect(e.message).not.toContain(KEY);
    const wrong = await rejection(cohere({ key: 'sk-wrong-key' }).rerank('q', ['d'], 1, 'm', never()));
    expect(wrong.message).toMatch(/401.*invalid api token/);
    expect(wrong.message).not.toContain('sk-wrong-key');
  });

  it('fails as no_api_key without calling out when the key lookup returns nothing', async () => {
    const p = new HttpRerankProvider({ name: 'cohere', baseUrl: fake.url, apiKey: () => undefined, defaultModel: 'm', timeoutMs: 2000 });
    const e = await rejection(p.rerank('q', ['d'], 1, 'm', never()));
    expect(e.reason).toBe('no_api_key');
    expect(fake.requests).toHaveLength(0);
    const { status } = await applyRerank('q', cands(['d']), opts(), new Map([['cohere', p]]));
    expect(status).toMatchObject({ applied: false, reason: 'no_api_key' });
  });

  it('sends no Authorization header when no key source is configured', async () => {
    const p = new HttpRerankProvider({ name: 'selfhosted', baseUrl: fake.url, defaultModel: 'm', timeoutMs: 2000 });
    const e = await rejection(p.rerank('q', ['d'], 1, 'm', never()));
    expect(e.message).toMatch(/401.*invalid api token/);
  });
});

describe('applyRerank', () => {
  const providers = () => new Map<string, RerankProvider>([['cohere', cohere({ timeoutMs: 200 })], ['local', new LocalRerankProvider()]]);
  const texts = ['a blue car', 'red apple pie', null, 'an apple', 'red wine'];

  it('reorders by provider score, keeps distance scores, returns rerank scores by id', async () => {
    const c = cands(texts);
    const { ordered, rerankScores, status } = await applyRerank('red apple', c, opts(), providers());
    expect(ordered.map((x) => x.id)).toEqual([101, 103, 104, 100, 102]);
    expect(ordered[0]).toEqual({ id: 101, text: 'red apple pie', score: 0.1 });
    expect(rerankScores.get(101)).toBe(1);
    expect(rerankScores.get(102)).toBe(0);
    expect(fake.requests[0].body.documents[2]).toBe('');
    expect(status).toMatchObject({ requested: true, applied: true, provider: 'cohere', model: 'rerank-english-v3.0', documents: 5 });
    expect(status.reason).toBeUndefined();
    expect(status.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('sends only max_documents, appends the rest in original order, cuts to top_n', async () => {
    const c = cands(['x', 'y', 'apple', 'apple too', 'z', 'w']);
    const { ordered, rerankScores, status } = await applyRerank('apple', c, opts({ max_documents: 3, top_n: 5 }), providers());
    expect(fake.requests[0].body.documents).toEqual(['x', 'y', 'apple']);
    expect(fake.requests[0].body.top_n).toBe(3);
    expect(ordered.map((x) => x.id)).toEqual([102, 100, 101, 103, 104]);
    expect(rerankScores.has(103)).toBe(false);
    expect(status.documents).toBe(3);
  });

  it('cuts to top_n and leaves unscored candidates without a rerank score', async () => {
    const c = cands(texts);
    const { ordered, rerankScores } = await applyRerank('red apple', c, opts({ top_n: 2 }), providers());
    expect(ordered.map((x) => x.id)).toEqual([101, 103]);
    expect(fake.requests[0].body.top_n).toBe(2);
    expect([...rerankScores.keys()].sort()).toEqual([101, 103]);
  });

  it('does not call anything without query text', async () => {
    let calls = 0;
    const spy: RerankProvider = { name: 'spy', defaultModel: 'm', rerank: async () => (calls++, []) };
    for (const q of [null, '', '   ']) {
      const { ordered, rerankScores, status } = await applyRerank(q, cands(texts), opts({ provider: 'spy', top_n: 3 }), new Map([['spy', spy]]));
      expect(ordered.map((x) => x.id)).toEqual([100, 101, 102]);
      expect(rerankScores.size).toBe(0);
      expect(status).toMatchObject({ requested: true, applied: false, reason: 'no_query_text', documents: 0 });
    }
    expect(calls).toBe(0);
    expect(fake.requests).toHaveLength(0);
  });

  it('reports no_documents for an empty candidate list', async () => {
    const { ordered, status } = await applyRerank('q', [], opts(), providers());
    expect(ordered).toEqual([]);
    expect(status).toMatchObject({ applied: false, reason: 'no_documents' });
  });

  it('unknown provider: fail-open status, fail-closed invalid_request', async () => {
    const open = await applyRerank('q', cands(texts), opts({ provider: 'nope', top_n: 2 }), providers());
    expect(open.ordered.map((x) => x.id)).toEqual([100, 101]);
    expect(open.status).toMatchObject({ applied: false, reason: 'unknown_provider', provider: 'nope' });
    const e = await rejection(applyRerank('q', cands(texts), opts({ provider: 'nope', fail_open: false }), providers()));
    expect(e).toBeInstanceOf(SableError);
    expect(e.code).toBe('invalid_request');
  });

  for (const [mode, reason] of [['429', 'rate_limited'], ['500', 'upstream_error'], ['hang', 'timeout'], ['badjson', 'upstream_error'], ['echo_key', 'upstream_error']] as const) {
    it(`fails open on ${mode} with reason ${reason}`, async () => {
      fake.mode = mode;
      const c = cands(texts);
      const { ordered, rerankScores, status } = await applyRerank('red apple', c, opts({ top_n: 3 }), providers());
      expect(ordered).toEqual(c.slice(0, 3));
      expect(rerankScores.size).toBe(0);
      expect(status).toMatchObject({ requested: true, applied: false, reason, provider: 'cohere', documents: 5 });
      expect(typeof status.message).toBe('string');
      expect(JSON.stringify(status)).not.toContain(KEY);
    });

    it(`fails closed on ${mode} with 502 upstream_error`, async () => {
      fake.mode = mode;
      const e = await rejection(applyRerank('red apple', cands(texts), opts({ fail_open: false }), providers()));
      expect(e).toBeInstanceOf(SableError);
      expect(e.code).toBe('upstream_error');
      const answer = errorResponse(e);
      expect(answer.status).toBe(502);
      expect(e.message).toContain(reason);
      expect(e.message).not.toContain(KEY);
      expect(String(answer.body)).not.toContain(KEY);
    });
  }

  it('fails open on an unreachable provider', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    const p = new Map<string, RerankProvider>([['cohere', cohere({ baseUrl: `http://127.0.0.1:${port}` })]]);
    const { status } = await applyRerank('q', cands(texts), opts(), p);
    expect(status).toMatchObject({ applied: false, reason: 'unreachable' });
  });

  it('treats a provider that throws a plain error as upstream_error', async () => {
    const broken: RerankProvider = { name: 'broken', defaultModel: 'm', rerank: async () => { throw new Error('boom'); } };
    const { status } = await applyRerank('q', cands(texts), opts({ provider: 'broken' }), new Map([['broken', broken]]));
    expect(status).toMatchObject({ applied: false, reason: 'upstream_error', message: 'boom' });
  });

  it('uses the local provider by default model', async () => {
    const { ordered, status } = await applyRerank('red apple', cands(texts), opts({ provider: 'local' }), providers());
    expect(status).toMatchObject({ applied: true, provider: 'local', model: 'bm25-lexical' });
    expect(ordered[0].id).toBe(101);
  });
});

describe('LocalRerankProvider', () => {
  const local = new LocalRerankProvider();

  it('orders by BM25 over the candidate set; empty documents score 0', async () => {
    const docs = ['the weather today is sunny', 'apples and oranges', '', 'green apples grow on apple trees', 'oranges only'];
    const out = await local.rerank('apple trees', docs, 5, 'bm25-lexical', never());
    expect(out.map((r) => r.index)).toEqual([3, 1, 0, 2, 4]);
    expect(out[0].score).toBeGreaterThan(out[1].score);
    expect(out[1].score).toBeGreaterThan(0);
    expect(out.find((r) => r.index === 2)!.score).toBe(0);
  });

  it('weights rare terms above common ones and honours topN', async () => {
    const docs = ['cat cat cat', 'cat dog', 'cat', 'cat fish'];
    const out = await local.rerank('cat dog', docs, 2, 'bm25-lexical', never());
    expect(out).toHaveLength(2);
    expect(out[0].index).toBe(1);
  });

  it('stems and drops stop words like the keyword index', async () => {
    const out = await local.rerank('the running', ['the the the', 'he runs', 'ran'], 3, 'bm25-lexical', never());
    expect(out[0].index).toBe(1);
    expect(out[1].score).toBe(0);
  });
});

describe('parseRerankOption', () => {
  const providers = new Map<string, RerankProvider>([['local', new LocalRerankProvider()], ['cohere', cohere()]]);
  const d = { provider: 'local' };
  // Shapes are refused by the search body's schema (the 400 invalid_request message the route
  // answers with); provider and model by the option parser, against the server's providers.
  const checkSearch = compileBody(SearchRequest);
  const invalid = (raw: unknown, match: RegExp, defaults: object = d) => {
    const problem = checkSearch({ rerank: raw });
    if (problem !== null) {
      expect(problem, JSON.stringify(raw)).toMatch(match);
      return;
    }
    let err: any;
    try {
      parseRerankOption(raw as any, 10, defaults as any);
    } catch (e) {
      err = e;
    }
    expect(err, JSON.stringify(raw)).toBeInstanceOf(SableError);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toMatch(match);
  };

  it('is off when absent, false, disabled or empty', () => {
    for (const raw of [undefined, false, { enabled: false }, { enabled: false, top_n: 3 }, {}]) expect(parseRerankOption(raw, 10, d)).toBeNull();
  });

  it('fills defaults for true and {enabled: true}', () => {
    const want = { enabled: true, provider: 'local', model: '', top_n: 7, max_documents: 100, fail_open: true };
    expect(parseRerankOption(true, 7, d)).toEqual(want);
    expect(parseRerankOption({ enabled: true }, 7, d)).toEqual(want);
    expect(parseRerankOption(true, 7, { provider: 'local', providers })).toEqual({ ...want, model: 'bm25-lexical' });
    expect(parseRerankOption(true, 7, { provider: 'local', max_documents: 40, fail_open: false })).toMatchObject({ max_documents: 40, fail_open: false });
  });

  it('turns on for an object with rerank fields and no enabled: false', () => {
    expect(parseRerankOption({ provider: 'cohere', top_n: 3 }, 10, { provider: 'local', providers })).toEqual({
      enabled: true, provider: 'cohere', model: 'rerank-english-v3.0', top_n: 3, max_documents: 100, fail_open: true,
    });
    expect(parseRerankOption({ max_documents: 1000, fail_open: false, model: 'x' }, 10, d)).toEqual({
      enabled: true, provider: 'local', model: 'x', top_n: 10, max_documents: 1000, fail_open: false,
    });
    expect(parseRerankOption({ unrelated: 1 }, 10, d)).toBeNull();
  });

  it('rejects invalid shapes with clear messages', () => {
    invalid(null, /boolean or an object/);
    invalid('yes', /boolean or an object/);
    invalid([true], /boolean or an object/);
    invalid({ enabled: 'true' }, /rerank.enabled must be a boolean/);
    invalid({ provider: 3 }, /rerank.provider must be a non-empty string/);
    invalid({ model: '' }, /rerank.model must be a non-empty string/);
    invalid({ top_n: 0 }, /rerank.top_n must be an integer from 1/);
    invalid({ top_n: 2.5 }, /rerank.top_n/);
    invalid({ max_documents: 0 }, /rerank.max_documents must be an integer from 1 to 1000/);
    invalid({ max_documents: 1001 }, /rerank.max_documents/);
    invalid({ fail_open: 'no' }, /rerank.fail_open must be a boolean/);
  });

  it('validates provider and model against the configured providers; an unknown provider fails open unless fail_open is false', () => {
    invalid({ provider: 'voyage', fail_open: false }, /rerank.provider 'voyage' is not configured.*local, cohere/, { provider: 'local', providers });
    invalid(true, /'jina' is not configured/, { provider: 'jina', providers, fail_open: false });
    // Fail-open covers provider problems: the search runs, and the rerank status says unknown_provider.
    expect(parseRerankOption({ provider: 'voyage' }, 10, { provider: 'local', providers })).toMatchObject({ provider: 'voyage', fail_open: true });
    invalid({ provider: 'local', model: 'gpt' }, /rerank.model 'gpt' is not offered by provider 'local'/, { provider: 'local', providers });
    expect(parseRerankOption({ provider: 'cohere', model: 'rerank-v3.5' }, 10, { provider: 'local', providers })?.model).toBe('rerank-v3.5');
  });
});
