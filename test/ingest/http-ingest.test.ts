// Ingestion of uploaded files over real HTTP, on the local embedding model: a folder of
// Markdown, text, HTML, CSV, PDF, DOCX and XLSX files through a file_upload source into a
// dataset; jobs, job files, statistics, the document catalog (cursor pages, status filter,
// downloads), search over the chunks with include_documents and filters; every bad-file class
// failing alone; incremental re-uploads; retry; two organizations; metrics.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { docxOf, encryptedPdf, oleContainer, pdfOf, prose, xlsxOf, zipBomb } from '../support/documents.js';
import { ingestClient, type FileToSend } from '../support/ingest.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const MAX_FILE = 200_000;

/** Every file under `dir`, recursively. */
function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
}

describe('ingesting uploaded files over HTTP', () => {
  let dir: string;
  let svc: Service;
  let admin: string;
  let other: string;
  const api = ingestClient(() => svc.url, () => admin);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-ingest-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'ingest-max-file-bytes': String(MAX_FILE) }, {}));
    admin = svc.createdAdminKey!;
    other = JSON.parse(execFileSync(process.execPath, [CLI, 'keys', 'create', '--org', 'acme', '--role', 'admin', '--data-dir', dir]).toString()).key;
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let folder: FileToSend[];
  let datasetId: string;
  let sourceId: string;
  let firstJob: any;

  it('ingests a folder of seven formats: job, files, statistics and documents say what happened', async () => {
    folder = [
      { name: 'cats.md', type: 'text/markdown', bytes: '# Cats\n\nCats are small carnivorous mammals that purr.\n\n## Feeding\n\nFeed cats fish and chicken twice a day.\n' },
      { name: 'notes.txt', type: 'text/plain', bytes: 'The lighthouse keeper climbs 217 steps every evening to light the lamp.' },
      { name: 'guide.html', type: 'text/html', bytes: '<html><head><title>Volcano guide</title></head><body><nav>menu</nav><main><h1>Volcanoes</h1><p>Magma that reaches the surface is called lava.</p></main></body></html>' },
      { name: 'staff.csv', type: 'text/csv', bytes: 'name,role,city\nAda,engineer,London\nLinus,maintainer,Portland\n' },
      { name: 'orbit.pdf', type: 'application/pdf', bytes: await pdfOf([['Orbital mechanics notes.'], ['A geostationary orbit sits 35786 km above the equator.']], 'Orbits') },
      { name: 'handbook.docx', type: DOCX, bytes: await docxOf([{ heading: 'Handbook', paragraphs: ['Expense reports are due on the fifth business day of each month.'] }]) },
      { name: 'stock.xlsx', type: XLSX, bytes: await xlsxOf([{ name: 'Warehouse', header: ['item', 'shelf'], rows: [['anchor', 'B7'], ['compass', 'C2']] }]) },
    ];
    datasetId = await api.dataset('library', { hybrid: true });
    sourceId = await api.source('my folder');
    firstJob = await api.upload(sourceId, datasetId, folder);
    expect(firstJob).toMatchObject({ status: 'completed', documents_processed: 7, progress_percentage: 100, current_step: null, error_details: null, dataset_id: datasetId, source_id: sourceId });
    expect(firstJob.vectors_inserted).toBeGreaterThanOrEqual(8);
    expect(firstJob.message).toMatch(/^7 document\(s\) ingested, 0 unchanged, 0 failed/);
    expect(firstJob.completed_at >= firstJob.started_at).toBe(true);

    const files = await api.files(firstJob.job_id);
    expect(files.counts).toEqual({ pending: 0, processing: 0, completed: 7, failed: 0, skipped: 0 });
    for (const f of files.files) {
      expect(f).toMatchObject({ status: 'completed', error_type: null, job_uuid: firstJob.job_id });
      expect(f.chunks_created).toBeGreaterThan(0);
      expect(f.vectors_inserted).toBe(f.chunks_created);
      expect(f.status_reason).toMatch(/chunks? from (markdown|text|html|csv|pdf|docx|xlsx)/);
    }
    expect(files.files.find((f: any) => f.file_name === 'orbit.pdf').status_reason).toMatch(/\(2 pages\)/);

    const stats = (await api.call('GET', `/ingestion/jobs/${firstJob.job_id}/statistics`)).body;
    expect(stats).toMatchObject({ total_files_discovered: 7, files_processed: 7, files_failed: 0, files_skipped: 0, error_breakdown: {}, total_vectors_inserted: firstJob.vectors_inserted });
    expect(stats.file_type_breakdown).toMatchObject({ 'application/pdf': 1, [DOCX]: 1, 'text/markdown': 1 });
    expect(stats.total_bytes_processed).toBe(folder.reduce((s, f) => s + (typeof f.bytes === 'string' ? Buffer.byteLength(f.bytes) : f.bytes.byteLength), 0));

    const docs = await api.documents(datasetId);
    expect(docs).toHaveLength(7);
    for (const d of docs) {
      expect(d).toMatchObject({ status: 'ready', download_available: true, source_id: sourceId, source_type: 'file_upload', error_type: null });
      for (const hidden of ['storage_key', 'payload_ref', 'bucket', 'key', 'content_hash']) expect(d).not.toHaveProperty(hidden);
    }
    expect(docs.find((d) => d.name === 'orbit.pdf')).toMatchObject({ title: 'Orbits', pages: 2, format: 'pdf' });
    expect(docs.find((d) => d.name === 'guide.html')).toMatchObject({ title: 'Volcano guide', format: 'html' });
  });

  it('searches the chunks: include_documents returns the text, metadata says where it came from, filters and hybrid work', async () => {
    const [hit] = await api.search(datasetId, 'how far above the equator is a geostationary orbit?', { top_k: 1 });
    expect(hit.doc_value).toContain('35786 km above the equator');
    expect(hit.metadata).toMatchObject({ name: 'orbit.pdf', content_type: 'application/pdf', source_type: 'file_upload', page: 1, page_end: 2, source_id: sourceId });
    expect(hit.metadata.text).toBe(hit.doc_value);
    const docs = await api.documents(datasetId);
    expect(hit.metadata.document_id).toBe(docs.find((d) => d.name === 'orbit.pdf').id);

    const feeding = (await api.search(datasetId, 'what should cats be fed, and how often?', { top_k: 2 })).find((r) => r.doc_value?.includes('Feed cats fish'))!;
    expect(feeding).toBeDefined();
    expect(feeding.metadata.heading).toBe('Cats > Feeding');
    const [row] = await api.search(datasetId, 'which shelf holds the compass', { top_k: 1, filters: { name: 'stock.xlsx' } });
    expect(row.metadata).toMatchObject({ sheet_name: 'Warehouse', row_start: 1, row_end: 2, column_names: 'item, shelf' });
    expect(row.doc_value).toContain('item: compass; shelf: C2');
    // A filter on the document's name keeps the search inside it.
    for (const r of await api.search(datasetId, 'lava', { filters: { name: 'notes.txt' } })) expect(r.metadata.name).toBe('notes.txt');
    // Keyword search sees the chunk text too (hybrid dataset).
    const hybrid = await api.call('POST', `/datasets/${datasetId}/search`, { query_text: 'lighthouse keeper', sparse_query: 'lighthouse', top_k: 1, include_documents: true });
    expect(hybrid.body.results[0].doc_value).toContain('217 steps');
    // Without include_documents the text stays out.
    const bare = (await api.call('POST', `/datasets/${datasetId}/search`, { query_text: 'lava', top_k: 1 })).body.results[0];
    expect(bare.metadata.text).toBeUndefined();
    expect(bare.doc_value).toBeUndefined();
  });

  it('pages documents by cursor with a status filter, and downloads originals', async () => {
    const all = await api.documents(datasetId);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = (await api.call('GET', `/datasets/${datasetId}/documents?limit=3${cursor ? `&cursor=${cursor}` : ''}`)).body;
      expect(Object.keys(page).sort()).toEqual(['documents', 'next_cursor']);
      expect(page.documents.length).toBeLessThanOrEqual(3);
      seen.push(...page.documents.map((d: any) => d.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(all.map((d) => d.id));
    expect(new Set(seen).size).toBe(7);
    expect((await api.documents(datasetId, '&status=ready')).length).toBe(7);
    expect(await api.documents(datasetId, '&status=processing')).toEqual([]);
    expect((await api.call('GET', `/datasets/${datasetId}/documents?status=done`)).status).toBe(400);
    expect((await api.call('GET', `/datasets/${datasetId}/documents?cursor=bm90LWEtY3Vyc29y`)).body.error).toBe('invalid_request');
    expect((await api.call('GET', `/datasets/${datasetId}/documents?limit=201`)).status).toBe(400);
    expect((await api.call('GET', `/datasets/${datasetId}/documents?offset=2`)).status).toBe(200);

    const pdf = all.find((d) => d.name === 'orbit.pdf');
    const res = await fetch(`${svc.url}/datasets/${datasetId}/documents/${pdf.id}/download`, { headers: { 'x-api-key': admin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toContain('orbit.pdf');
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(folder.find((f) => f.name === 'orbit.pdf')!.bytes as Uint8Array))).toBe(true);
    const missing = await api.call('GET', `/datasets/${datasetId}/documents/00000000-0000-4000-8000-000000000000/download`);
    expect(missing).toMatchObject({ status: 404, body: { error: 'document_not_found' } });
  });

  it('fails each bad file alone with its error_type; the good file in the same job is ingested', async () => {
    const ds = await api.dataset('bad files');
    const src = await api.source('bad files');
    const bad: [FileToSend, string][] = [
      [{ name: 'broken.pdf', type: 'application/pdf', bytes: '%PDF-1.7\n1 0 obj << /Type /Catalog' }, 'corrupt_file'],
      [{ name: 'locked.pdf', type: 'application/pdf', bytes: encryptedPdf() }, 'encrypted'],
      [{ name: 'locked.docx', type: DOCX, bytes: oleContainer() }, 'encrypted'],
      [{ name: 'empty.txt', type: 'text/plain', bytes: ' \n\n ' }, 'empty_document'],
      [{ name: 'image.png', type: 'image/png', bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]) }, 'unsupported_type'],
      [{ name: 'huge.txt', type: 'text/plain', bytes: prose(1500) }, 'file_too_large'],
      [{ name: 'bomb.docx', type: DOCX, bytes: zipBomb() }, 'zip_bomb'],
    ];
    expect(Buffer.byteLength(bad[5][0].bytes as string)).toBeGreaterThan(MAX_FILE);
    const good: FileToSend = { name: 'good.md', type: 'text/markdown', bytes: '# Fine\n\nThis one parses.' };
    const job = await api.upload(src, ds, [...bad.map(([f]) => f), good]);
    expect(job.status).toBe('completed');
    expect(job.documents_processed).toBe(1);
    expect(job.message).toMatch(/1 document\(s\) ingested, 0 unchanged, 7 failed/);
    expect(job.error_details.type).toBe('files_failed');
    const files = await api.files(job.job_id);
    expect(files.counts).toMatchObject({ completed: 1, failed: 7 });
    for (const [f, type] of bad) {
      const row = files.files.find((x: any) => x.file_name === f.name);
      expect(row.status, f.name).toBe('failed');
      expect(row.error_type, `${f.name}: ${row.error_message}`).toBe(type);
      expect(row.error_message.length).toBeGreaterThan(5);
      expect(row.completed_at).not.toBeNull();
      expect(job.error_details.files).toContainEqual(expect.objectContaining({ file_name: f.name, error_type: type }));
    }
    const failedOnly = await api.files(job.job_id, '&status=failed');
    expect(failedOnly.total).toBe(7);
    expect(failedOnly.counts.completed).toBe(1);
    const stats = (await api.call('GET', `/ingestion/jobs/${job.job_id}/statistics`)).body;
    expect(stats.error_breakdown).toEqual({ corrupt_file: 1, encrypted: 2, empty_document: 1, unsupported_type: 1, file_too_large: 1, zip_bomb: 1 });

    // Failed files are cataloged as failed documents with their reason, out of search.
    const failedDocs = await api.documents(ds, '&status=failed');
    expect(failedDocs.map((d) => d.name).sort()).toEqual(bad.map(([f]) => f.name).sort());
    expect(failedDocs.find((d) => d.name === 'locked.pdf')).toMatchObject({ error_type: 'encrypted', chunk_count: 0 });
    expect((await api.documents(ds, '&status=ready')).map((d) => d.name)).toEqual(['good.md']);
    expect(await api.count(ds)).toBe(1);
  });

  it('re-uploads incrementally: unchanged files skipped by hash, changed ones replace their chunks, stale chunks leave', async () => {
    const ds = await api.dataset('incremental');
    const src = await api.source('incremental', { sync_mode: 'incremental' });
    const long = `# Long\n\n${prose(60, 11)}`;
    await api.upload(src, ds, [
      { name: 'a.md', type: 'text/markdown', bytes: '# A\n\nAlpha stays the same.' },
      { name: 'b.md', type: 'text/markdown', bytes: long },
    ]);
    const before = await api.documents(ds);
    const vectorsBefore = await api.count(ds);
    const bBefore = before.find((d) => d.name === 'b.md');
    expect(bBefore.chunk_count).toBeGreaterThan(3);
    expect(vectorsBefore).toBe(1 + bBefore.chunk_count);

    const again = await api.upload(src, ds, [
      { name: 'a.md', type: 'text/markdown', bytes: '# A\n\nAlpha stays the same.' },
      { name: 'b.md', type: 'text/markdown', bytes: '# B\n\nBeta was rewritten about zeppelins.' },
    ]);
    expect(again.message).toMatch(/^1 document\(s\) ingested, 1 unchanged, 0 failed/);
    const files = await api.files(again.job_id);
    expect(files.files.find((f: any) => f.file_name === 'a.md')).toMatchObject({ status: 'skipped', status_reason: 'unchanged (same content)', vectors_inserted: 0 });
    const after = await api.documents(ds);
    expect(after.map((d) => d.id).sort()).toEqual(before.map((d) => d.id).sort());
    expect(after.find((d) => d.name === 'b.md')).toMatchObject({ id: bBefore.id, chunk_count: 1, title: 'B', job_id: again.job_id });
    expect(after.find((d) => d.name === 'a.md').job_id).toBe(before.find((d) => d.name === 'a.md').job_id);
    expect(await api.count(ds)).toBe(2);
    const [hit] = await api.search(ds, 'zeppelins', { top_k: 1 });
    expect(hit.doc_value).toContain('zeppelins');
    for (const r of await api.search(ds, 'river stone lantern harbor', { top_k: 5 })) expect(r.doc_value).not.toMatch(/lantern|harbor/);

    // In full mode (the file_upload default) the same bytes are processed again, and stay one copy.
    const fullDs = await api.dataset('full');
    const fullSrc = await api.source('full');
    const once = await api.upload(fullSrc, fullDs, [{ name: 'c.txt', type: 'text/plain', bytes: 'Gamma.' }]);
    const twice = await api.upload(fullSrc, fullDs, [{ name: 'c.txt', type: 'text/plain', bytes: 'Gamma.' }]);
    expect([once.documents_processed, twice.documents_processed]).toEqual([1, 1]);
    expect(await api.count(fullDs)).toBe(1);
    expect(await api.documents(fullDs)).toHaveLength(1);
  });

  it('runs a source again with POST /ingestion/jobs (every retained upload), and retries failed jobs as fresh ones', async () => {
    const ds = await api.dataset('rerun');
    const src = await api.source('rerun', { sync_mode: 'incremental' });
    await api.upload(src, ds, [{ name: 'one.txt', type: 'text/plain', bytes: 'One.' }]);
    await api.upload(src, ds, [{ name: 'two.txt', type: 'text/plain', bytes: 'Two.' }]);
    const started = await api.call('POST', '/ingestion/jobs', { source_id: src, dataset_id: ds });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ status: 'pending', documents_processed: 0, vectors_inserted: 0, progress_percentage: 0, completed_at: null });
    const rerun = await api.job(started.body.job_id);
    expect(rerun.status).toBe('completed');
    const files = await api.files(rerun.job_id);
    expect(files.files.map((f: any) => f.file_name).sort()).toEqual(['one.txt', 'two.txt']);
    expect(files.counts.skipped).toBe(2);
    expect((await api.call('POST', `/ingestion/jobs/${rerun.job_id}/retry`)).body.error).toBe('job_not_retryable');

    for (const [body, code] of [
      [{ source_id: src, dataset_id: '00000000-0000-4000-8000-000000000000' }, 'dataset_not_found'],
      [{ source_id: '00000000-0000-4000-8000-000000000000', dataset_id: ds }, 'source_not_found'],
      [{ source_id: src }, 'invalid_request'],
    ] as const) {
      expect((await api.call('POST', '/ingestion/jobs', body)).body.error).toBe(code);
    }

    // A job whose every file failed is retried in full: same files, a new job that says whose retry it is.
    const failing = await api.upload(src, ds, [{ name: 'nothing.txt', type: 'text/plain', bytes: '   ' }]);
    expect(failing.status).toBe('failed');
    expect(failing.error_details.type).toBe('empty_document');
    const retried = await api.call('POST', `/ingestion/jobs/${failing.job_id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ retry_of: failing.job_id, status: 'pending' });
    const done = await api.job(retried.body.job_id);
    expect(done.status).toBe('failed');
    expect((await api.files(done.job_id)).files.map((f: any) => f.file_name)).toEqual(['nothing.txt']);
  });

  it("keeps organizations apart: another organization's jobs, documents and datasets are not found", async () => {
    const as = (method: string, path: string, body?: unknown) => api.call(method, path, body, other);
    expect((await as('GET', `/ingestion/jobs/${firstJob.job_id}`)).body.error).toBe('job_not_found');
    expect((await as('GET', `/ingestion/jobs/${firstJob.job_id}/files`)).body.error).toBe('job_not_found');
    expect((await as('POST', `/ingestion/jobs/${firstJob.job_id}/retry`)).body.error).toBe('job_not_found');
    expect((await as('GET', `/datasets/${datasetId}/documents`)).body.error).toBe('dataset_not_found');
    const docs = await api.documents(datasetId);
    expect((await as('GET', `/datasets/${datasetId}/documents/${docs[0].id}/download`)).body.error).toBe('dataset_not_found');
    expect((await as('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.error).toBe('source_not_found');
    const theirs = (await as('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'theirs', config: {} })).body.id;
    expect((await as('POST', '/ingestion/jobs', { source_id: theirs, dataset_id: datasetId })).body.error).toBe('dataset_not_found');
    expect((await as('GET', '/ingestion/jobs?limit=200')).body.jobs).toEqual([]);
  });

  it('answers 410 document_unavailable when the retained original is gone, and removes documents with their dataset', async () => {
    const ds = await api.dataset('lost originals');
    const src = await api.source('lost originals');
    await api.upload(src, ds, [{ name: 'gone.txt', type: 'text/plain', bytes: 'This original will be lost.' }]);
    const [doc] = await api.documents(ds);
    for (const f of walk(join(dir, 'uploads'))) if (f.includes(src)) rmSync(f);
    const r = await api.call('GET', `/datasets/${ds}/documents/${doc.id}/download`);
    expect(r.status).toBe(410);
    expect(r.body.error).toBe('document_unavailable');

    expect((await api.call('DELETE', `/datasets/${ds}`)).status).toBe(204);
    expect((await api.call('GET', `/datasets/${ds}/documents`)).body.error).toBe('dataset_not_found');
  });

  it('reports jobs, schedules and ingestion stages in /metrics', async () => {
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    expect(text).toMatch(/^sable_jobs\{kind="ingest",status="completed"\} \d+$/m);
    expect(text).toMatch(/^sable_jobs\{kind="ingest",status="failed"\} \d+$/m);
    for (const stage of ['fetch', 'parse', 'chunk', 'embed', 'index']) expect(text).toMatch(new RegExp(`^sable_ingest_stage_seconds_total\\{stage="${stage}"\\} [0-9.e-]+$`, 'm'));
    expect(text).toMatch(/^sable_schedules\{enabled="true"\} 0$/m);
  });
});
