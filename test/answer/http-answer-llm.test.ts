// Question answering with a model: the service talks to a local server that speaks the OpenAI
// chat-completions API (streamed text, tool calls split across chunks, 429 / 500 / a hang).
// Generated answers stream sentence by sentence with their citations checked; the agentic mode
// runs the model's tool calls through the same validation; a failing model degrades to the
// extractive answer with a warning event; the deadline and token bounds answer partially; a
// dropped stream re-attaches by run id with Last-Event-ID, and one left alone is cancelled.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { startChatServer } from '../../testkit/peers/chat-server.js';
import { ingestClient } from '../support/ingest.js';
import { readFrames, streamProblems, type Frame } from '../../testkit/sse.js';

const CATEGORIES = ['kitchen', 'garden', 'office'];

describe('answering questions with a model (OpenAI-compatible chat endpoint)', () => {
  let dir: string;
  let svc: Service;
  let admin: string;
  let chat: Awaited<ReturnType<typeof startChatServer>>;
  const api = ingestClient(() => svc.url, () => admin);
  let docs: string;
  let products: string;

  const post = (body: Record<string, unknown>, opts: { headers?: Record<string, string>; signal?: AbortSignal; url?: string } = {}) =>
    fetch((opts.url ?? svc.url) + '/intelligence/query', { method: 'POST', signal: opts.signal, headers: { 'x-api-key': admin, 'content-type': 'application/json', ...opts.headers }, body: JSON.stringify(body) });
  const stream = async (body: Record<string, unknown>) => readFrames(await post(body));
  const textOf = (frames: Frame[]) => frames.filter((f) => f.chunk_type === 'text').map((f) => f.content).join('');

  beforeAll(async () => {
    chat = await startChatServer();
    dir = mkdtempSync(join(tmpdir(), 'sable-answer-llm-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'llm-url': chat.url, 'llm-model': 'test-model', 'llm-timeout-ms': '1500', 'answer-detach-grace-ms': '3000' }, { SABLE_LLM_API_KEY: 'deployment-key' }));
    admin = svc.createdAdminKey!;
    docs = await api.dataset('handbook');
    const source = await api.source('folder');
    await api.upload(source, docs, [
      { name: 'lighthouse.md', type: 'text/markdown', bytes: '# Lighthouse\n\nThe lighthouse keeper climbs 217 steps every evening to light the lamp. The lamp burns paraffin oil and turns twice a minute.\n' },
      { name: 'volcano.txt', type: 'text/plain', bytes: 'Magma that reaches the surface is called lava. A volcano that has not erupted for ten thousand years is called extinct.' },
    ]);
    products = await api.dataset('products', { schema: [{ name: 'category', type: 'string' }, { name: 'price', type: 'f64' }, { name: 'published', type: 'string' }] });
    const vectors = Array.from({ length: 12 }, (_, i) => ({ id: `sku-${i}`, metadata: { text: `The ${CATEGORIES[i % 3]} product ${i} comes in a box.`, category: CATEGORIES[i % 3], price: 5 + i, published: `2020-0${1 + (i % 9)}-01` } }));
    expect((await api.call('POST', `/datasets/${products}/insert`, { vectors })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await svc.close();
    await chat.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams a generated answer: citations checked sentence by sentence, a marker that does not hold is dropped; the key comes from the org secret, else the deployment', async () => {
    const before = chat.requests.length;
    const frames = await stream({ query: 'How many steps does the lighthouse keeper climb?', dataset_ids: [docs] });
    expect(streamProblems(frames)).toEqual([]);
    const request = chat.requests[before];
    expect(request.headers.authorization).toBe('Bearer deployment-key');
    expect(request.body).toMatchObject({ model: 'test-model', stream: true });
    expect(request.body.messages[0].content).toContain('[1] lighthouse.md');
    const text = textOf(frames);
    expect(text).toContain('The lighthouse keeper climbs 217 steps every evening to light the lamp. [1]');
    // The invented sentence keeps no marker: [2] is either no source or a source that does not say it.
    expect(text).toContain('The moon is made of green cheese.');
    expect(text).not.toMatch(/green cheese\.\s*\[2\]/);
    const checked = frames.find((f) => f.metadata.action === 'citations.checked')!;
    expect(checked.metadata.status).toBe('warning');
    expect(checked.metadata.detail.dropped[0]).toMatchObject({ marker: 2, sentence: 'The moon is made of green cheese.' });
    expect(frames.filter((f) => f.chunk_type === 'text').length).toBeGreaterThanOrEqual(2);
    expect(frames.find((f) => f.chunk_type === 'metadata')!.metadata).toMatchObject({ answerer: 'generative', model: 'test-model' });

    expect((await api.call('PUT', '/org-secrets/llm_api_key', { value: 'org-key' })).status).toBe(201);
    const n = chat.requests.length;
    await stream({ query: 'What is lava?', dataset_ids: [docs] });
    expect(chat.requests[n].headers.authorization).toBe('Bearer org-key');
    expect((await api.call('DELETE', '/org-secrets/llm_api_key')).status).toBe(204);
  });

  it('agentic: the model calls tools (split across chunks); calls are validated against the schema; the answer is written from the gathered sources', async () => {
    chat.script(
      { kind: 'tool_calls', calls: [{ name: 'compute', arguments: { dataset_id: products, op: 'avg', field: 'price', filters: [{ field: 'category', op: 'eq', value: 'garden' }, { field: 'published', op: 'gt', value: 2019 }, { field: 'colour', op: 'eq', value: 'red' }] } }] },
      { kind: 'tool_calls', calls: [{ name: 'search', arguments: { query: 'garden product box', dataset_id: products } }, { name: 'compute', arguments: { dataset_id: products, op: 'sum', field: 'category' } }] },
      { kind: 'text', text: 'Enough gathered.' },
    );
    const frames = await stream({ query: 'What do garden products cost on average?', dataset_ids: [products], mode: 'agentic' });
    expect(streamProblems(frames)).toEqual([]);
    const dropped = frames.filter((f) => f.metadata.action === 'plan.filter_dropped').map((f) => f.content);
    expect(dropped).toEqual(["'published' stores dates as string values: it cannot be range-filtered", 'dataset products has no field \'colour\'']);
    const compute = frames.find((f) => f.metadata.action === 'tool.compute' && f.metadata.status === 'ok')!;
    expect(compute.metadata.step).toBe(1);
    const garden = Array.from({ length: 12 }, (_, i) => i).filter((i) => i % 3 === 1);
    expect(compute.metadata.detail.value).toBeCloseTo(garden.reduce((s, i) => s + 5 + i, 0) / garden.length, 6);
    expect(frames.find((f) => f.metadata.action === 'tool.search' && f.metadata.status === 'ok')!.metadata.step).toBe(2);
    expect(frames.find((f) => f.metadata.action === 'tool.compute' && f.metadata.status === 'error')!.content).toContain("sum needs a numeric field; 'category' holds string values");
    expect(frames.some((f) => f.chunk_type === 'artifact')).toBe(true);
    // The tool results went back to the model as tool messages.
    const third = chat.requests.at(-2)!.body.messages;
    expect(third.filter((m) => m.role === 'tool').length).toBe(3);
    expect(textOf(frames)).toContain('The average price');
  });

  for (const [name, behaviour] of [
    ['429', { kind: 'status', status: 429, headers: { 'retry-after': '7' } }],
    ['500', { kind: 'status', status: 500 }],
    ['a hang past the timeout', { kind: 'hang' }],
  ] as const) {
    it(`a model that answers ${name} degrades to the extractive answer with a warning event, never a broken stream`, async () => {
      chat.script(behaviour);
      const frames = await stream({ query: 'What is magma called once it reaches the surface?', dataset_ids: [docs] });
      expect(streamProblems(frames)).toEqual([]);
      const warning = frames.find((f) => f.metadata.action === 'model.failed')!;
      expect(warning.metadata.status).toBe('warning');
      if (name === '429') expect(warning.metadata.detail.retry_after_seconds).toBe(7);
      expect(textOf(frames)).toContain('Magma that reaches the surface is called lava. [1]');
      expect(frames.find((f) => f.chunk_type === 'metadata')!.metadata.answerer).toBe('extractive');
      expect(frames.at(-1)!.metadata.status).toBe('succeeded');
    });
  }

  it('a model stream cut part-way keeps what it sent and says the answer is partial', async () => {
    chat.script({ kind: 'cut', text: 'The lighthouse keeper climbs 217 steps every evening to light the lamp. [1] It also' });
    const frames = await stream({ query: 'How many steps does the lighthouse keeper climb?', dataset_ids: [docs] });
    expect(streamProblems(frames)).toEqual([]);
    const meta = frames.find((f) => f.chunk_type === 'metadata')!.metadata;
    expect(meta.partial).toBe(true);
    expect(meta.budget.degraded_reasons).toEqual(['model_error']);
    expect(textOf(frames)).toContain('217 steps');
  });

  it('the deadline answers with what the run has: warning, partial, degraded reason, a coverage note', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    chat.script({ kind: 'text', text: `The lighthouse keeper climbs 217 steps every evening to light the lamp. [1] ${words}.`, delayMs: 200 });
    const t0 = Date.now();
    const frames = await stream({ query: 'How many steps does the lighthouse keeper climb?', dataset_ids: [docs], deadline_seconds: 5 });
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(streamProblems(frames)).toEqual([]);
    expect(frames.find((f) => f.metadata.action === 'budget.deadline')!.metadata.status).toBe('warning');
    const meta = frames.find((f) => f.chunk_type === 'metadata')!.metadata;
    expect(meta).toMatchObject({ partial: true, budget: { degraded_reasons: ['deadline'] } });
    expect(textOf(frames)).toContain('217 steps');
    expect(textOf(frames)).toContain('Coverage is incomplete: the deadline passed');
    expect(frames.at(-1)!.metadata).toMatchObject({ status: 'succeeded', partial: true, degraded_reasons: ['deadline'] });
  }, 15_000);

  it('a dropped stream re-attaches by run id and Last-Event-ID: every chunk arrives once, done once', async () => {
    chat.script({ kind: 'text', text: 'The lighthouse keeper climbs 217 steps every evening to light the lamp. [1] The lamp burns paraffin oil and turns twice a minute. [1]', delayMs: 120 });
    const body = { query: 'Tell me about the lighthouse lamp', dataset_ids: [docs], run_id: 'reattach-1' };
    const abort = new AbortController();
    const first = await readFrames(await post(body, { signal: abort.signal }), { stopAfter: 9, abort });
    expect(first.at(-1)!.chunk_type).not.toBe('done');
    const last = first.at(-1)!.id!;
    const rest = await readFrames(await post(body, { headers: { 'last-event-id': String(last) } }));
    const all = [...first, ...rest];
    expect(all.map((f) => f.id)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    expect(streamProblems(all)).toEqual([]);
    expect(textOf(all)).toContain('paraffin');
    const run = await api.call('GET', '/intelligence/runs/reattach-1');
    expect(run.body).toMatchObject({ status: 'succeeded', answer: textOf(all), last_seq: all.length });
    expect((await api.call('GET', '/intelligence/runs/reattach-1/events?after=' + last)).body.events.every((e: { seq: number }) => e.seq > last)).toBe(true);
  }, 20_000);

  it('a stream nobody re-attaches to is cancelled after the grace period: the model call stops, the record says cancelled', async () => {
    chat.script({ kind: 'hang' });
    const abort = new AbortController();
    await readFrames(await post({ query: 'What is lava?', dataset_ids: [docs], run_id: 'gone-1' }, { signal: abort.signal }), { stopAfter: 1, abort });
    const until = Date.now() + 10_000;
    let status = 'running';
    while (status === 'running' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await api.call('GET', '/intelligence/runs/gone-1')).body.status;
    }
    // The hang outlasts the model timeout (1.5 s) and the grace (3 s): the run either degraded and
    // finished before the grace ended, or was cancelled; it never stays running.
    expect(['cancelled', 'succeeded']).toContain(status);
  }, 20_000);
});

describe('the token bound', () => {
  it('cuts the context at the budget: warning event, partial, tokens reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sable-answer-tokens-'));
    const svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'answer-max-tokens': '40' }, {}));
    try {
      const admin = svc.createdAdminKey!;
      const api = ingestClient(() => svc.url, () => admin);
      const ds = await api.dataset('notes');
      const vectors = Array.from({ length: 6 }, (_, i) => ({ id: `n${i}`, metadata: { text: `Note ${i}: the harbour crane lifts ${i + 10} containers an hour when the wind is calm and the crew is rested.` } }));
      expect((await api.call('POST', `/datasets/${ds}/insert`, { vectors })).status).toBe(200);
      const r = await api.call('POST', '/intelligence/query', { query: 'How many containers does the harbour crane lift?', stream: false, dataset_ids: [ds] });
      expect(r.body.metadata).toMatchObject({ partial: true, budget: { degraded_reasons: ['tokens'], max_tokens: 40 } });
      expect(r.body.sources.length).toBeLessThan(5);
      expect(r.body.answer).toContain('Coverage is incomplete: the token budget was used up');
    } finally {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
