// The data the fuzz run must leave as it found it (organization A), the scratch data it may
// change (organization B), and a snapshot of A that compares before and after the run.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Pools } from './cases.js';

const CLI = join(__dirname, '..', '..', '..', 'dist', 'control-plane', 'cli.js');
export const DIM = 8;

type Call = (key: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;

export function caller(url: () => string): Call {
  return async (key, method, path, body, headers = {}) => {
    const res = await fetch(url() + path, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed };
  };
}

function cliKey(dir: string, org: string, role: string): string {
  return JSON.parse(execFileSync(process.execPath, [CLI, 'keys', 'create', '--org', org, '--role', role, '--data-dir', dir]).toString()).key;
}

/** A deterministic vector of the seeded datasets. */
export function vectorOf(i: number): number[] {
  return Array.from({ length: DIM }, (_, d) => Math.round(Math.sin(i * 7.3 + d * 1.9) * 1000) / 1000);
}

const GUIDE = [
  '# The lighthouse keeper',
  '',
  'The keeper climbs 217 steps every evening to light the lamp at the top of the tower.',
  '',
  '## Supplies',
  '',
  'Oil for the lamp arrives by boat on the first Monday of each month, weather permitting.',
].join('\n');

async function ok(p: Promise<{ status: number; body: any }>, status: number, what: string): Promise<any> {
  const r = await p;
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

/** A file_upload source's upload (init, PUT, complete); resolves with the job once it ended. */
export async function uploadDocuments(call: Call, key: string, sourceId: string, datasetId: string, files: { name: string; type: string; bytes: Uint8Array }[], timeoutMs: number) {
  const init = await ok(call(key, 'POST', `/ingestion/sources/${sourceId}/upload/init`, {
    dataset_id: datasetId,
    files: files.map((f) => ({ name: f.name, size_bytes: Math.max(1, f.bytes.byteLength), content_type: f.type })),
  }), 200, 'upload init');
  for (const [i, u] of init.uploads.entries()) {
    const put = await fetch(u.upload_url, { method: 'PUT', headers: { 'content-type': files[i].type.split(';')[0] }, body: files[i].bytes as BodyInit, signal: AbortSignal.timeout(60_000) });
    expect(put.status, `PUT ${files[i].name}: ${await put.text()}`).toBe(200);
  }
  await ok(call(key, 'POST', `/ingestion/sources/${sourceId}/upload/complete`, { job_id: init.job_id, file_ids: init.uploads.map((u: { file_id: string }) => u.file_id) }), 200, 'upload complete');
  return waitJob(call, key, init.job_id, timeoutMs);
}

export async function waitJob(call: Call, key: string, jobId: string, timeoutMs: number): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const j = (await call(key, 'GET', `/ingestion/jobs/${jobId}`)).body;
    if (j.status === 'completed' || j.status === 'failed') return j;
    if (Date.now() > until) throw new Error(`job ${jobId} did not end within ${timeoutMs} ms: ${JSON.stringify(j)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until the dataset's index is built: later searches then score the same way every time. */
async function indexed(call: Call, key: string, id: string): Promise<void> {
  await ok(call(key, 'POST', `/datasets/${id}/index/rebuild`), 202, 'rebuild');
  for (let i = 0; i < 600; i++) {
    if ((await call(key, 'GET', `/datasets/${id}/index`)).body.status === 'ready') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the index of ${id} was not built`);
}

export interface ScratchB {
  vectors: string;
  text: string;
  source: string;
  schedule: string;
  session: string;
}

/** Resources of organization B that a group of cases may change (and that nothing else deletes). */
export async function scratchB(call: Call, key: string, label: string): Promise<ScratchB> {
  const vectors = await ok(call(key, 'POST', '/datasets', { name: `scratch-vectors-${label}`, dim: DIM, metric: 'l2', schema: [{ name: 'year', type: 'i64' }] }), 201, 'dataset');
  const text = await ok(call(key, 'POST', '/datasets', { name: `scratch-text-${label}`, hybrid: true }), 201, 'text dataset');
  for (const d of [vectors, text]) await ok(call(key, 'POST', `/datasets/${d.id}/ensure-engine`), 200, 'ensure-engine');
  await ok(call(key, 'POST', `/datasets/${vectors.id}/insert`, { vectors: Array.from({ length: 30 }, (_, i) => ({ id: i + 1, values: vectorOf(i), metadata: { year: 2000 + i } })) }), 200, 'insert');
  const source = await ok(call(key, 'POST', '/ingestion/sources', { source_type: 'file_upload', name: `scratch-${label}`, config: {} }), 201, 'source');
  const schedule = await ok(call(key, 'POST', '/ingestion/schedules', { source_id: source.id, dataset_id: text.id, cron: '0 0 1 1 *', enabled: false }), 201, 'schedule');
  const session = await ok(call(key, 'POST', '/intelligence/sessions', { title: `scratch ${label}` }), 201, 'session');
  return { vectors: vectors.id, text: text.id, source: source.id, schedule: schedule.id, session: session.id };
}

/** Organization A (seeded, must not change) and B (scratch); resolves with the pools of ids. */
export async function seed(call: Call, dir: string, adminA: string): Promise<{ pools: Pools; uploadUrl: string }> {
  const member = cliKey(dir, 'default', 'member');
  const adminB = cliKey(dir, 'fuzz-b', 'admin');
  const ids: Pools['ids'] = { A: {}, B: {} };
  const add = (org: 'A' | 'B', name: string, ...values: string[]) => (ids[org][name] ??= []).push(...values);

  for (const [org, key] of [['A', adminA], ['B', adminB]] as const) {
    const vectors = await ok(call(key, 'POST', '/datasets', { name: `fuzz-vectors-${org}`, dim: DIM, metric: org === 'A' ? 'cosine' : 'l2', schema: [{ name: 'year', type: 'i64' }] }), 201, 'dataset');
    const text = await ok(call(key, 'POST', '/datasets', { name: `fuzz-text-${org}`, hybrid: true }), 201, 'text dataset');
    for (const d of [vectors, text]) await ok(call(key, 'POST', `/datasets/${d.id}/ensure-engine`), 200, 'ensure-engine');
    const rows = Array.from({ length: 30 }, (_, i) => ({
      id: i < 24 ? i + 1 : `doc-${i - 23}`,
      values: vectorOf(i),
      metadata: { lang: i % 2 ? 'en' : 'fr', year: 2000 + i, note: `row ${i}` },
    }));
    await ok(call(key, 'POST', `/datasets/${vectors.id}/insert`, { vectors: rows }), 200, 'insert');
    add(org, 'datasetId', vectors.id, text.id);
    add(org, 'vectorId', '1', '24', 'doc-1', 'doc-6');

    const source = await ok(call(key, 'POST', '/ingestion/sources', { source_type: 'file_upload', name: `fuzz-source-${org}`, config: { sync_mode: 'incremental' } }), 201, 'source');
    add(org, 'sourceId', source.id);
    const job = await uploadDocuments(call, key, source.id, text.id, [{ name: 'guide.md', type: 'text/markdown', bytes: new TextEncoder().encode(GUIDE) }], 60_000);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    add(org, 'jobId', job.job_id);
    const docs = await ok(call(key, 'GET', `/datasets/${text.id}/documents`), 200, 'documents');
    add(org, 'documentId', ...docs.documents.map((d: { id: string }) => d.id));

    const schedule = await ok(call(key, 'POST', '/ingestion/schedules', { source_id: source.id, dataset_id: text.id, cron: '0 0 1 1 *', enabled: false }), 201, 'schedule');
    add(org, 'scheduleId', schedule.id);
    const session = await ok(call(key, 'POST', '/intelligence/sessions', { title: `fuzz ${org}`, dataset_id: text.id, metadata: { seeded: true } }), 201, 'session');
    await ok(call(key, 'POST', `/intelligence/sessions/${session.id}/messages`, { role: 'user', content: 'How many steps?' }), 201, 'message');
    add(org, 'sessionId', session.id);
    await ok(call(key, 'PUT', `/org-secrets/fuzz-secret-${org}`, { value: 'not a real key' }), 201, 'secret');
    add(org, 'secretRef', `fuzz-secret-${org}`, 'emb:openai:api_key');
    const connection = await ok(call(key, 'POST', '/connections', { provider: 'google', source_type: 'gdrive' }), 201, 'connection');
    add(org, 'connectionId', connection.id);
    const answer = await ok(call(key, 'POST', '/intelligence/query', { query: 'How many steps does the keeper climb?', dataset_ids: [text.id], stream: false }), 200, 'query');
    add(org, 'runId', answer.metadata.run_id);
    add(org, 'ref', ...answer.sources.map((s: { preview_ref: string }) => s.preview_ref));
    add(org, 'type', 'file_upload', 'web', 's3', 'gdrive', 'nope');
    add(org, 'fileId', 'file-1', '../../admin.key');
    if (org === 'A') for (const d of [vectors, text]) await indexed(call, key, d.id);
  }
  // An upload that is never completed: its URLs are targets for raw PUTs.
  const init = await ok(call(adminB, 'POST', `/datasets/${ids.B.datasetId[0]}/upload/init`, {
    files: [{ name: 'a.parquet', size_bytes: 100, content_type: 'application/vnd.apache.parquet' }, { name: 'b.parquet', size_bytes: 1, content_type: 'text/plain' }],
  }), 200, 'parquet upload init');
  add('B', 'jobId', init.job_id);
  add('B', 'token', ...init.uploads.map((u: { upload_url: string }) => u.upload_url.split('/').pop()!));
  const sessionA = (await ok(call(adminA, 'POST', '/auth/sessions'), 201, 'session token')).token;
  const sessionB = (await ok(call(adminB, 'POST', '/auth/sessions'), 201, 'session token')).token;
  const endableA = (await ok(call(adminA, 'POST', '/auth/sessions'), 201, 'session token')).token;
  const endableB = (await ok(call(adminB, 'POST', '/auth/sessions'), 201, 'session token')).token;
  return { pools: { keys: { A: adminA, B: adminB, member, sessionA, sessionB, endableA, endableB }, ids }, uploadUrl: new URL(init.uploads[0].upload_url).origin };
}

/** Everything organization A can read of what was seeded, minus what reading itself moves. */
export async function snapshot(call: Call, key: string, ids: Pools['ids']['A']): Promise<Record<string, unknown>> {
  const get = async (path: string) => {
    const r = await call(key, 'GET', path);
    return { status: r.status, body: r.body };
  };
  const out: Record<string, unknown> = {};
  out.datasets = await get('/datasets?limit=200');
  for (const id of ids.datasetId) {
    for (const part of ['', '/stats', '/index', '/hybrid', '/promotion-policy', '/documents?limit=200']) out[`${id}${part}`] = await get(`/datasets/${id}${part}`);
    // Memory moves with what the process caches, and a restart after a crash rebuilds what an
    // index snapshot lacks: neither is the data.
    delete (out[`${id}/stats`] as { body: Record<string, unknown> }).body.memory_bytes;
    delete (out[`${id}/index`] as { body: Record<string, unknown> }).body.built_at;
    const sla = (await get(`/datasets/${id}/sla`)) as { body: Record<string, unknown> };
    for (const moving of ['observed_p99_us', 'current_nprobe', 'current_beam_width']) delete sla.body[moving];
    out[`${id}/sla`] = sla;
  }
  const [vectors, text] = ids.datasetId;
  for (let i = 0; i < 30; i++) {
    const id = i < 24 ? String(i + 1) : `doc-${i - 23}`;
    out[`payload ${id}`] = await get(`/datasets/${vectors}/payload/${id}`);
  }
  for (const q of [0, 11, 29]) {
    const r = await call(key, 'POST', `/datasets/${vectors}/search`, { query: vectorOf(q + 0.5), top_k: 30 });
    out[`search ${q}`] = { status: r.status, results: r.body.results?.map((h: { id: number; score: number; metadata: unknown }) => [h.id, h.score.toFixed(5), h.metadata]) };
  }
  const t = await call(key, 'POST', `/datasets/${text}/search`, { query_text: 'how many steps does the keeper climb', top_k: 5, include_documents: true });
  out['text search'] = { status: t.status, results: t.body.results?.map((h: { id: number; score: number; doc_value: string }) => [h.id, h.score.toFixed(4), h.doc_value]) };
  for (const path of ['/ingestion/sources?limit=200', '/ingestion/schedules?limit=200', '/ingestion/jobs?limit=200', '/org-secrets', '/intelligence/sessions?limit=200', '/connections']) out[path] = await get(path);
  for (const s of ids.sessionId) out[`session ${s} messages`] = await get(`/intelligence/sessions/${s}/messages?limit=200`);
  for (const j of ids.jobId) out[`job ${j} files`] = await get(`/ingestion/jobs/${j}/files?limit=200`);
  for (const d of ids.documentId) out[`document ${d}`] = await get(`/datasets/${text}/documents/${d}/download`);
  return out;
}
