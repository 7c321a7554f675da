// Question answering over real HTTP without a model (the extractive answerer), as one body of
// tests run against a target (./target.ts): test/answer/http-answer.test.ts runs it embedded,
// test/cluster/contract-three-nodes.test.ts on a three-node cluster whose calls rotate over the
// nodes (a run streamed by one node is resumed, replayed and previewed through others).
// Documents ingested through a file_upload source and products inserted with typed metadata;
// JSON and SSE answers, checked citations and every field of sources and chunks; the planner's
// filters, notes and tools (compute, read_document); the caller's filters as authorization; step
// bounds; runs (status, events after a seq, SSE resumed with Last-Event-ID); sessions; preview
// references; two organizations.
import { beforeAll, expect, it } from 'vitest';
import { readFrames, streamProblems, type Frame } from '../../testkit/sse.js';
import { ingestClient } from '../support/ingest.js';
import type { ContractTarget, TargetProfile } from './target.js';

const CATEGORIES = ['kitchen', 'garden', 'office'];

/** A long guide of several chunks, one fact per section. */
function orbitGuide(): string {
  const sections = ['Launch', 'Transfer', 'Insertion', 'Station keeping', 'Decommissioning'];
  return sections
    .map((s, i) => `## ${s}\n\n` + Array.from({ length: 9 }, (_, j) => `Phase ${i + 1} of the orbit guide, note ${j + 1}: the ${s.toLowerCase()} team checks valve ${i * 10 + j} and records its pressure before the burn.`).join(' '))
    .join('\n\n');
}

/**
 * Registers the answer tests in the calling describe; `t` is read once its beforeAll has run.
 * The target runs with a detach grace of 200 ms (answer-detach-grace-ms) for the leaving client.
 */
export function answerSuite(profile: TargetProfile, t: () => ContractTarget): void {
  const onCluster = profile.kind === 'cluster';
  let admin: string;
  let other: string;
  const api = ingestClient(() => t().url(), () => admin);
  let docs: string;
  let products: string;
  let otherDataset: string;
  /** A dataset made, provisioned and served through every URL of the target. */
  const dataset = async (name: string, extra: Record<string, unknown> = {}) => {
    const id = await api.dataset(name, extra);
    await t().settle(id, admin);
    return id;
  };

  const ask = async (body: Record<string, unknown>, as = admin) => api.call('POST', '/intelligence/query', { stream: false, ...body }, as);
  const stream = async (body: Record<string, unknown>, headers: Record<string, string> = {}, as = admin) => {
    const res = await fetch(t().url() + '/intelligence/query', { method: 'POST', headers: { 'x-api-key': as, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    return readFrames(res);
  };

  beforeAll(async () => {
    // Organizations of their own: a target may serve other suites' datasets in its first organization.
    admin = (await t().newKey('answers', 'admin')).key;
    other = (await t().newKey('answers-acme', 'admin')).key;
    docs = await dataset('handbook');
    const source = await api.source('folder');
    const job = await api.upload(source, docs, [
      { name: 'lighthouse.md', type: 'text/markdown', bytes: '# Lighthouse\n\nThe lighthouse keeper climbs 217 steps every evening to light the lamp. The lamp burns paraffin oil and turns twice a minute.\n' },
      { name: 'volcano.txt', type: 'text/plain', bytes: 'Magma that reaches the surface is called lava. A volcano that has not erupted for ten thousand years is called extinct.' },
      { name: 'orbit-guide.md', type: 'text/markdown', bytes: orbitGuide() },
    ]);
    expect(job.status).toBe('completed');
    products = await dataset('products', { schema: [{ name: 'category', type: 'string' }, { name: 'price', type: 'f64' }, { name: 'year', type: 'i32' }, { name: 'published', type: 'string' }] });
    const vectors = Array.from({ length: 30 }, (_, i) => ({
      id: `sku-${i}`,
      metadata: { text: `The ${CATEGORIES[i % 3]} product number ${i} is sold in a blue box.`, name: `sku-${i}`, category: CATEGORIES[i % 3], price: 10 + i * 3, year: 2015 + (i % 8), published: `20${15 + (i % 8)}-03-01` },
    }));
    expect((await api.call('POST', `/datasets/${products}/insert`, { vectors })).status).toBe(200);
    const o = await api.call('POST', '/datasets', { name: 'secret-notes' }, other);
    otherDataset = o.body.id;
    await api.call('POST', `/datasets/${otherDataset}/ensure-engine`, undefined, other);
    await t().settle(otherDataset, other);
    await api.call('POST', `/datasets/${otherDataset}/insert`, { vectors: [{ id: 'n1', metadata: { text: 'The lighthouse keeper of acme climbs 999 steps.' } }] }, other);
  }, 120_000);

  it('answers as JSON: the answer cites its sources, each cited sentence is in the cited chunk, every contract field is there', async () => {
    const r = await ask({ query: 'How many steps does the lighthouse keeper climb?', dataset_ids: [docs] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { answer, sources, chunks, message, metadata } = r.body;
    expect(answer).toContain('217 steps');
    expect(message).toBeNull();
    expect(sources[0].name).toBe('lighthouse.md');
    const markers = [...answer.matchAll(/([^[\]]+?)\s\[(\d+)\]/g)];
    expect(markers.length).toBeGreaterThan(0);
    for (const [, sentence, n] of markers) {
      const source = sources[Number(n) - 1];
      expect(source, `marker [${n}]`).toBeDefined();
      expect(source.chunks.some((c: { text: string }) => c.text.replace(/\s+/g, ' ').includes(sentence.trim())), sentence).toBe(true);
    }
    for (const s of sources) {
      expect(Object.keys(s).sort()).toEqual(
        ['name', 'path', 'url', 'source_type', 'dataset_id', 'dataset_document_id', 'content_type', 'relevance', 'pages', 'sheet_names', 'chunk_count', 'preview', 'preview_ref', 'chunks', 'timestamp_start', 'timestamp_end', 'file_id', 'thumbnail_url'].sort(),
      );
      expect(s.dataset_id).toBe(docs);
      expect(s.source_type).toBe('file_upload');
      expect(s.relevance).toBeGreaterThan(0);
      expect(s.relevance).toBeLessThanOrEqual(1);
      expect(s.chunk_count).toBe(s.chunks.length);
      for (const c of s.chunks) expect(Object.keys(c).sort()).toEqual(['chunk_id', 'score', 'text', 'chunk_index', 'sheet_name', 'row_start', 'row_end', 'column_names'].sort());
    }
    const docList = await api.documents(docs);
    expect(sources[0].dataset_document_id).toBe(docList.find((d) => d.name === 'lighthouse.md').id);
    expect(chunks.length).toBeGreaterThan(0);
    for (const c of chunks) {
      expect(Object.keys(c).sort()).toEqual(['id', 'text', 'score', 'source', 'source_url', 'page', 'metadata'].sort());
      for (const hidden of ['document_storage_key', 'document_storage_bucket', 'payload_ref', 'text']) expect(c.metadata).not.toHaveProperty(hidden);
    }
    expect(metadata).toMatchObject({ status: 'succeeded', mode: 'auto', path: 'single_pass', answerer: 'extractive', partial: false });
    expect(metadata.budget).toMatchObject({ steps_used: 1, degraded_reasons: [] });
  });

  it('streams SSE: the first chunk at once with the run id, events with monotonic seq, text, citation before done, done last with run id and status', async () => {
    const t0 = performance.now();
    const res = await fetch(t().url() + '/intelligence/query', { method: 'POST', headers: { 'x-api-key': admin, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'What is magma called once it reaches the surface?' }) });
    const firstByte = performance.now() - t0;
    const frames = await readFrames(res);
    expect(firstByte).toBeLessThan(2000);
    expect(streamProblems(frames)).toEqual([]);
    const first = frames[0];
    expect(first).toMatchObject({ id: 1, chunk_type: 'event', metadata: { phase: 'received', action: 'query.received', seq: 1 } });
    const runId = first.metadata.run_id;
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    const phases = frames.filter((f) => f.chunk_type === 'event').map((f) => f.metadata.phase);
    expect([...new Set(phases)]).toEqual(['received', 'resolve', 'plan', 'route', 'act', 'synthesize', 'done']);
    const search = frames.filter((f) => f.metadata.action === 'tool.search');
    expect(search.map((f) => f.metadata.status)).toEqual(['started', 'ok']);
    expect(search[1].metadata).toMatchObject({ step: 1, tool: 'search' });
    expect(typeof search[1].metadata.ms).toBe('number');
    const text = frames.filter((f) => f.chunk_type === 'text').map((f) => f.content).join('');
    expect(text).toContain('lava');
    const citation = frames.find((f) => f.chunk_type === 'citation')!;
    expect(citation.metadata.sources[0]).toMatchObject({ name: 'volcano.txt' });
    expect(typeof citation.metadata.sources[0].relevance).toBe('number');
    expect(frames.at(-1)).toMatchObject({ chunk_type: 'done', metadata: { run_id: runId, status: 'succeeded' } });

    // The run, kept: status, trace and answer; events after a seq.
    const run = await api.call('GET', `/intelligence/runs/${runId}`);
    expect(run.body).toMatchObject({ run_id: runId, status: 'succeeded', answer: text, last_seq: frames.at(-1)!.id });
    expect(run.body.events.map((e: { seq: number }) => e.seq)).toEqual(frames.filter((f) => f.chunk_type === 'event').map((f) => f.id));
    const after = await api.call('GET', `/intelligence/runs/${runId}/events?after=5`);
    expect(after.body.events.every((e: { seq: number }) => e.seq > 5)).toBe(true);
    expect(after.body.events.length).toBe(run.body.events.filter((e: { seq: number }) => e.seq > 5).length);
    expect((await api.call('GET', `/intelligence/runs/${runId}`, undefined, other)).body.error).toBe('run_not_found');

    // The same chunks as SSE after Last-Event-ID (what an EventSource sends when it reconnects).
    const resumed = await fetch(`${t().url()}/intelligence/runs/${runId}/events`, { headers: { 'x-api-key': admin, accept: 'text/event-stream', 'last-event-id': '4' } });
    const rest = await readFrames(resumed);
    expect(rest.map((f) => f.id)).toEqual(frames.filter((f) => f.id! > 4).map((f) => f.id));
    expect(rest.at(-1)!.chunk_type).toBe('done');
    // And through the query route itself, with the run id and Last-Event-ID.
    const again = await stream({ query: 'What is magma called once it reaches the surface?', run_id: runId }, { 'last-event-id': String(frames.length - 2) });
    expect(again.map((f) => f.id)).toEqual([frames.length - 1, frames.length]);
  });

  it('refuses what the contract refuses, before any chunk', async () => {
    const retired = await ask({ query: 'hello', dataset_id: docs });
    expect(retired.status).toBe(400);
    expect(retired.body.error).toBe('invalid_request');
    expect(retired.body.message).toContain('dataset_ids');
    for (const bad of [{ top_k: 0 }, { top_k: 51 }, { max_steps: 0 }, { max_steps: 25 }, { deadline_seconds: 4 }, { deadline_seconds: 601 }, { mode: 'deep' }, { query: '' }, { run_id: 'a b' }]) {
      const r = await ask({ query: 'hello', ...bad });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error).toBe('invalid_request');
    }
    expect((await ask({ query: 'hello', dataset_ids: [otherDataset] })).body.error).toBe('dataset_not_found');
    expect((await ask({ query: 'hello', session_id: '00000000-0000-4000-8000-000000000000' })).body.error).toBe('session_not_found');
    const conflict = await ask({ query: 'one question', run_id: 'my-run-1' });
    expect(conflict.status).toBe(200);
    expect((await ask({ query: 'another question', run_id: 'my-run-1' })).body.error).toBe('run_conflict');
    expect((await api.call('POST', '/intelligence/query', { query: 'x' }, 'sable_' + '0'.repeat(64))).status).toBe(401);
  });

  it('searches every dataset of the organization when dataset_ids is omitted, and never another organization\'s', async () => {
    const mine = await ask({ query: 'How many steps does the lighthouse keeper climb?' });
    expect(mine.body.answer).toContain('217');
    expect(mine.body.answer).not.toContain('999');
    expect(new Set(mine.body.sources.map((s: { dataset_id: string }) => s.dataset_id))).not.toContain(otherDataset);
    const theirs = await ask({ query: 'How many steps does the lighthouse keeper climb?' }, other);
    expect(theirs.body.answer).toContain('999');
    expect(theirs.body.sources.every((s: { dataset_id: string }) => s.dataset_id === otherDataset)).toBe(true);
  });

  it('plans from the typed schema: equality on a field value, ranges on numbers, a note for dates stored as strings, compute over metadata', async () => {
    const count = await ask({ query: 'How many products are in the kitchen category?', dataset_ids: [products] });
    expect(count.body.metadata.plan.datasets[0]).toMatchObject({ filters: [{ field: 'category', op: 'eq', value: 'kitchen' }], compute: { op: 'count' } });
    expect(count.body.metadata.path).toBe('tool_loop');
    expect(count.body.answer).toContain('10 matching records');
    expect(count.body.metadata.computed[0]).toMatchObject({ op: 'count', value: 10, rows: 10 });

    const avg = await ask({ query: 'What is the average price of garden products with a year over 2018?', dataset_ids: [products] });
    const garden = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 3 === 1 && 2015 + (i % 8) > 2018);
    expect(avg.body.metadata.plan.datasets[0].filters).toEqual(expect.arrayContaining([{ field: 'category', op: 'eq', value: 'garden' }, { field: 'year', op: 'gt', value: 2018 }]));
    expect(avg.body.metadata.computed[0].value).toBeCloseTo(garden.reduce((s, i) => s + 10 + i * 3, 0) / garden.length, 5);

    const grouped = await stream({ query: 'How many products are there per category?', dataset_ids: [products] });
    const artifact = grouped.find((f) => f.chunk_type === 'artifact')!;
    expect(artifact.metadata.rows.map((r: unknown[]) => [r[0], r[1]]).sort()).toEqual([['garden', 10], ['kitchen', 10], ['office', 10]]);
    expect(grouped.find((f) => f.metadata.action === 'tool.compute' && f.metadata.status === 'ok')!.metadata.step).toBe(2);

    // Dates stored as strings are not range-filtered: the plan says so in the trace.
    const dated = await stream({ query: 'Which office products were published after 2019?', dataset_ids: [products] });
    const note = dated.find((f) => f.metadata.action === 'plan.note')!;
    expect(note.metadata.status).toBe('warning');
    expect(note.content).toContain("'published' stores dates as strings");
    expect(dated.find((f) => f.metadata.action === 'plan.ready')!.metadata.detail.datasets[0].filters).toEqual([{ field: 'category', op: 'eq', value: 'office' }]);

    // fast mode makes one pass and says it does not compute.
    const fast = await ask({ query: 'How many products are in the kitchen category?', dataset_ids: [products], mode: 'fast' });
    expect(fast.body.metadata).toMatchObject({ path: 'single_pass', computed: [] });
    expect(fast.body.metadata.warnings.join(' ')).toContain('fast mode');
  });

  it("keeps the caller's filters in every search and computation: no plan drops or widens them", async () => {
    // The question names kitchen, the caller allows garden only: nothing of kitchen is ever read.
    const r = await ask({ query: 'Tell me about the kitchen products in a blue box', dataset_ids: [products], filters: { category: 'garden' } });
    expect(r.body.sources.length).toBeGreaterThan(0);
    for (const c of r.body.chunks) expect(c.metadata.category).toBe('garden');
    const counted = await ask({ query: 'How many products are in the office category?', dataset_ids: [products], filters: { category: 'garden' } });
    expect(counted.body.metadata.computed[0].value).toBe(0);
    const ranged = await ask({ query: 'How many products are there per category?', dataset_ids: [products], advanced_filters: [{ field: 'price', op: 'lt', value: 40 }] });
    const rows = ranged.body.metadata.computed[0].groups.reduce((s: number, g: { rows: number }) => s + g.rows, 0);
    expect(rows).toBe(Array.from({ length: 30 }, (_, i) => 10 + i * 3).filter((p) => p < 40).length);
  });

  it('reads a whole document in the tool loop, and stops at the step bound with a partial answer', async () => {
    const frames = await stream({ query: 'Summarize the whole orbit guide', dataset_ids: [docs], mode: 'agentic' });
    expect(streamProblems(frames)).toEqual([]);
    const read = frames.find((f) => f.metadata.action === 'tool.read_document' && f.metadata.status === 'ok')!;
    const guide = (await api.documents(docs)).find((d) => d.name === 'orbit-guide.md');
    expect(guide.chunk_count).toBeGreaterThan(2);
    expect(read.metadata.detail).toMatchObject({ document_id: guide.id, chunks: guide.chunk_count });
    const citation = frames.find((f) => f.chunk_type === 'citation')!;
    const source = citation.metadata.sources.find((s: { dataset_document_id: string }) => s.dataset_document_id === guide.id);
    expect(source.chunks.map((c: { chunk_index: number }) => c.chunk_index).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: guide.chunk_count }, (_, i) => i));

    const bounded = await stream({ query: 'Summarize the whole orbit guide', dataset_ids: [docs], mode: 'agentic', max_steps: 1 });
    expect(streamProblems(bounded)).toEqual([]);
    const warning = bounded.find((f) => f.metadata.action === 'budget.max_steps')!;
    expect(warning.metadata.status).toBe('warning');
    const meta = bounded.find((f) => f.chunk_type === 'metadata')!.metadata;
    expect(meta.partial).toBe(true);
    expect(meta.budget.degraded_reasons).toEqual(['max_steps']);
    expect(bounded.filter((f) => f.chunk_type === 'text').map((f) => f.content).join('')).toContain('Coverage is incomplete');
    expect(bounded.at(-1)!.metadata).toMatchObject({ status: 'succeeded', partial: true });
  });

it('keeps sessions: messages in order, the session scope, the exchange and its trace appended by a query; another organization sees none', async () => {
    const created = await api.call('POST', '/intelligence/sessions', { title: 'Lighthouse chat', workspace_id: 'ws-1', dataset_id: docs, metadata: { user: 'ada' } });
    expect(created.status).toBe(201);
    const s = created.body;
    expect(s).toMatchObject({ title: 'Lighthouse chat', workspace_id: 'ws-1', dataset_id: docs, metadata: { user: 'ada' } });
    expect((await api.call('GET', `/intelligence/sessions/${s.id}`)).body).toEqual(s);
    expect((await api.call('POST', '/intelligence/sessions', { dataset_id: otherDataset })).body.error).toBe('dataset_not_found');
    expect((await api.call('POST', `/intelligence/sessions/${s.id}/messages`, { role: 'system', content: 'Be brief.' })).status).toBe(201);
    expect((await api.call('POST', `/intelligence/sessions/${s.id}/messages`, { role: 'robot', content: 'x' })).status).toBe(400);

    const first = await ask({ query: 'How many steps does the lighthouse keeper climb?', session_id: s.id });
    expect(first.body.answer).toContain('217');
    expect(first.body.sources.every((x: { dataset_id: string }) => x.dataset_id === docs)).toBe(true);
    // A follow-up searches with the question it follows.
    const follow = await ask({ query: 'And what does the lamp burn?', session_id: s.id });
    expect(follow.body.metadata.plan.search_query).toContain('lighthouse keeper');
    expect(follow.body.answer).toContain('paraffin');

    const messages = (await api.call('GET', `/intelligence/sessions/${s.id}/messages`)).body.messages;
    expect(messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect(messages[2]).toMatchObject({ content: first.body.answer, metadata: { run_id: first.body.metadata.run_id } });
    expect((await api.call('GET', `/intelligence/sessions/${s.id}/messages?limit=2`)).body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    const events = (await api.call('GET', `/intelligence/sessions/${s.id}/events`)).body.events;
    expect(events.filter((e: { action: string }) => e.action === 'query.received').map((e: { run_id: string }) => e.run_id)).toEqual([first.body.metadata.run_id, follow.body.metadata.run_id]);

    expect((await api.call('GET', '/intelligence/sessions')).body.sessions.map((x: { id: string }) => x.id)).toContain(s.id);
    expect((await api.call('GET', '/intelligence/sessions', undefined, other)).body.sessions).toEqual([]);
    for (const path of [`/intelligence/sessions/${s.id}`, `/intelligence/sessions/${s.id}/messages`, `/intelligence/sessions/${s.id}/events`]) {
      expect((await api.call('GET', path, undefined, other)).body.error).toBe('session_not_found');
    }
    expect((await ask({ query: 'hello', session_id: s.id }, other)).body.error).toBe('session_not_found');
    expect((await api.call('DELETE', `/intelligence/sessions/${s.id}`)).status).toBe(204);
    expect((await api.call('GET', `/intelligence/sessions/${s.id}`)).status).toBe(404);
    expect((await api.call('GET', `/intelligence/sessions/${s.id}/messages`)).body.error).toBe('session_not_found');
  });

  it('resolves a preview_ref for its organization only; an altered one is refused', async () => {
    const r = await ask({ query: 'What is an extinct volcano?', dataset_ids: [docs] });
    const ref = r.body.sources[0].preview_ref;
    expect(ref).not.toContain('/');
    const preview = await api.call('GET', `/intelligence/previews/${ref}`);
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ name: 'volcano.txt', dataset_id: docs, dataset_document_id: r.body.sources[0].dataset_document_id });
    expect(preview.body.chunks[0].text).toContain('extinct');
    expect((await fetch(t().url() + preview.body.download_path, { headers: { 'x-api-key': admin } })).status).toBe(200);
    expect((await api.call('GET', `/intelligence/previews/${ref}`, undefined, other)).status).toBe(404);
    const altered = ref.slice(0, -2) + (ref.endsWith('AA') ? 'BB' : 'AA');
    expect((await api.call('GET', `/intelligence/previews/${altered}`)).status).toBe(404);
  });

  it('a stream whose client leaves is cancelled after the grace period, and keeps its record', async () => {
    const abort = new AbortController();
    const res = await fetch(t().url() + '/intelligence/query', {
      method: 'POST',
      signal: abort.signal,
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'Summarize the whole orbit guide', mode: 'agentic', run_id: 'leaving-client' }),
    });
    const frames: Frame[] = await readFrames(res, { stopAfter: 1, abort });
    expect(frames[0].metadata.run_id).toBe('leaving-client');
    // Either the run ended before the server saw the client go, or it was cancelled: never left running.
    await new Promise((r) => setTimeout(r, 1500));
    const run = await api.call('GET', '/intelligence/runs/leaving-client');
    expect(['cancelled', 'succeeded']).toContain(run.body.status);
  });
}
