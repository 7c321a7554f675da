// Ingestion over HTTP, as bodies of tests run against a target (./target.ts): sources (the nine
// types and their config schemas, CRUD, secrets sealed at rest and masked in answers, references /
// unused / cleanup, 409 source_in_use and force, two organizations), and uploaded files on the
// local embedding model (seven formats through a file_upload source: jobs, job files, statistics,
// the document catalog, search over the chunks, every bad-file class failing alone, incremental
// re-uploads, retry, two organizations, metrics). test/ingest/http-sources.test.ts and
// test/ingest/http-ingest.test.ts run them embedded, test/cluster/contract-three-nodes-2.test.ts on
// a three-node cluster. The ingest suite's target runs with ingest-max-file-bytes INGEST_FLAGS.
import { readFileSync, rmSync, statSync } from 'node:fs';
import { beforeAll, expect, it } from 'vitest';
import { docxOf, encryptedPdf, oleContainer, pdfOf, prose, xlsxOf, zipBomb } from '../support/documents.js';
import { until } from '../support/cluster.js';
import { ingestClient, type FileToSend } from '../support/ingest.js';
import type { ContractTarget, TargetProfile } from './target.js';

const TYPES = ['web', 's3', 'gcs', 'gdrive', 'github', 'gitlab', 'jira', 'confluence', 'file_upload'];
const SECRET = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const MAX_FILE = 200_000;

/** The settings (loadConfig's flags) the ingest suite's target is started with. */
export const INGEST_FLAGS = { 'ingest-max-file-bytes': String(MAX_FILE) };

/** Registers the source tests in the calling describe; `t` is read once its beforeAll has run. */
export function sourcesSuite(_profile: TargetProfile, t: () => ContractTarget): void {
  let admin: string;
  let other: string;
  const call = async (method: string, path: string, body?: unknown, key = admin) => {
    const res = await fetch(t().url() + path, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const s3Config = { bucket: 'docs', access_key_id: 'AKIAEXAMPLE', secret_access_key: SECRET };
  const atRest = (needle: string) => t().catalogFiles().some((f) => {
    try {
      return readFileSync(f).includes(Buffer.from(needle));
    } catch {
      return false; // a file the store removed meanwhile
    }
  });

  beforeAll(async () => {
    // Organizations of their own: a target may serve other suites' sources in its first one, and
    // cleanup and the lists see the whole organization.
    admin = (await t().newKey('sources', 'admin')).key;
    other = (await t().newKey('sources-acme', 'admin')).key;
  });

  it('lists the nine types; supports_auth is false for web and file_upload only', async () => {
    const r = await call('GET', '/ingestion/source-types');
    expect(r.status).toBe(200);
    expect(r.body.source_types.map((t: { type: string }) => t.type)).toEqual(TYPES);
    for (const t of r.body.source_types) {
      expect(t.supports_auth).toBe(t.type !== 'web' && t.type !== 'file_upload');
      expect(t.name.length).toBeGreaterThan(2);
    }
  });

  it("answers each type's config schema with required fields, defaults and secret fields marked; the same schemas are in /openapi.json", async () => {
    const s3 = (await call('GET', '/ingestion/source-types/s3')).body;
    expect(s3.schema.required).toEqual(expect.arrayContaining(['bucket', 'access_key_id', 'secret_access_key']));
    expect(s3.secret_fields).toEqual(['access_key_id', 'secret_access_key']);
    expect(s3.schema.properties.secret_access_key).toMatchObject({ writeOnly: true, 'x-secret': true });
    expect(s3.schema.properties.region.default).toBe('us-east-1');
    expect(s3.schema.properties.file_patterns.default).toEqual(['*.pdf', '*.docx', '*.txt', '*.csv']);
    expect(s3.schema.properties.max_file_size_mb.default).toBe(100);
    expect(s3.schema.properties.sync_mode.default).toBe('incremental');
    const web = (await call('GET', '/ingestion/source-types/web')).body;
    expect(web.schema.required).toEqual(['start_urls']);
    expect(web.secret_fields).toEqual([]);
    expect(web.schema.properties.max_depth.default).toBe(3);
    expect((await call('GET', '/ingestion/source-types/confluence')).body.secret_fields).toEqual(expect.arrayContaining(['api_token', 'oauth_credentials']));
    expect((await call('GET', '/ingestion/source-types/gcs')).body.secret_fields).toContain('service_account_json');
    const missing = await call('GET', '/ingestion/source-types/ftp');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toContain('file_upload');

    const doc = (await call('GET', '/openapi.json')).body;
    for (const t of TYPES) {
      const served = (await call('GET', `/ingestion/source-types/${t}`)).body.schema;
      expect(doc.components.schemas[`SourceConfig_${t}`]).toEqual(served);
    }
    expect(doc.paths['/ingestion/sources'].post.requestBody).toBeDefined();
  });

  it('validate fills every default, masks secrets, and refuses what create refuses (the same schema)', async () => {
    // A web source is contacted (and fails here: no network beyond 127.0.0.1); its defaults are filled all the same.
    const v = await call('POST', '/ingestion/sources/validate', { source_type: 'web', config: { start_urls: ['http://127.0.0.1:9/docs'] } });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ success: false, samples: [] });
    expect(v.body.normalized_config).toEqual({
      start_urls: ['http://127.0.0.1:9/docs'], max_depth: 3, max_pages: 1000, allowed_domains: [], include_assets: true, max_assets_per_page: 5, headers: {}, sync_mode: 'incremental',
    });
    // A source that cannot be reached says why, with its defaults filled all the same.
    const jira = await call('POST', '/ingestion/sources/validate', { source_type: 'jira', config: { cloud_id: 'c1', project_keys: ['ENG'], connection_id: '00000000-0000-4000-8000-000000000000' } });
    expect(jira.body).toMatchObject({ success: false, message: expect.stringContaining('does not exist'), normalized_config: { include_comments: true, sync_mode: 'incremental' } });
    const s3 = await call('POST', '/ingestion/sources/validate', { source_type: 's3', config: s3Config });
    expect(s3.body.normalized_config).toMatchObject({ bucket: 'docs', region: 'us-east-1', max_file_size_mb: 100, sync_mode: 'incremental', access_key_id: '********', secret_access_key: '********' });
    expect(JSON.stringify(s3.body)).not.toContain(SECRET);

    const bad: [string, Record<string, unknown>, RegExp][] = [
      ['web', {}, /start_urls/],
      ['web', { start_urls: ['https://a.example'], max_depth: 'deep' }, /max_depth/],
      ['s3', { bucket: 'b' }, /access_key_id/],
      ['s3', { ...s3Config, sync_mode: 'sometimes' }, /sync_mode/],
      ['github', { installation_id: 5, repositories: ['not-a-repo'] }, /repositories/],
      ['github', { installation_id: 5, repositories: ['a/b'], active_branch_days: 91 }, /active_branch_days/],
      ['gitlab', { access_token: 'x', auth_mode: 'token' }, /groups or projects/],
      ['gdrive', { folder_ids: ['f'] }, /service_account_json or connection_id/],
      ['confluence', { spaces: [] }, /cloud_id|base_url/],
      ['file_upload', { storage_provider: 'ftp' }, /storage_provider/],
    ];
    for (const [type, config, message] of bad) {
      const checked = await call('POST', '/ingestion/sources/validate', { source_type: type, config });
      expect(checked.status, type).toBe(200);
      expect(checked.body.success, `${type} ${JSON.stringify(config)}`).toBe(false);
      expect(checked.body.message).toMatch(message);
      const created = await call('POST', '/ingestion/sources', { source_type: type, name: 'x', config });
      expect(created.status).toBe(400);
      expect(created.body.error).toBe('invalid_request');
      expect(created.body.message).toMatch(message);
    }
    expect((await call('POST', '/ingestion/sources', { source_type: 'ftp', name: 'x', config: {} })).status).toBe(400);
    expect((await call('POST', '/ingestion/sources', { source_type: 'web', config: { start_urls: ['https://a.example'] } })).body.message).toMatch(/name/);
  });

  it('creates, reads, lists, patches and deletes; secrets are sealed at rest and ******** in every answer', async () => {
    const created = await call('POST', '/ingestion/sources', { source_type: 's3', name: 'bucket of docs', description: 'manuals', config: s3Config, metadata: { team: 'docs' } });
    expect(created.status).toBe(201);
    const s = created.body;
    expect(s).toMatchObject({ type: 's3', name: 'bucket of docs', description: 'manuals', metadata: { team: 'docs' } });
    expect(s.config).toMatchObject({ access_key_id: '********', secret_access_key: '********', region: 'us-east-1' });
    expect(Object.keys(s).sort()).toEqual(['config', 'created_at', 'description', 'id', 'metadata', 'name', 'org_id', 'type', 'updated_at']);
    expect((await call('GET', `/ingestion/sources/${s.id}`)).body).toEqual(s);
    const listed = await call('GET', '/ingestion/sources?limit=200');
    expect(listed.body).toMatchObject({ limit: 200, offset: 0 });
    expect(listed.body.sources.find((x: { id: string }) => x.id === s.id)).toEqual(s);
    // Nowhere the catalog is kept at rest is the secret in the clear; the source's name is, once the
    // store has written it (a cluster's PostgreSQL flushes its log a moment after the commit).
    const files = t().catalogFiles();
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(statSync(f).isFile()).toBe(true);
    await until('the source written at rest', async () => atRest('bucket of docs'), 10_000);
    expect(atRest(SECRET)).toBe(false);

    // A patch that sends the mask keeps the stored secret; a new value replaces it.
    const patched = await call('PATCH', `/ingestion/sources/${s.id}`, { name: 'renamed', config: { ...s.config, prefix: 'manuals/' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'renamed', config: { prefix: 'manuals/', secret_access_key: '********' } });
    expect(patched.body.updated_at >= s.updated_at).toBe(true);
    const noSecret = await call('PATCH', `/ingestion/sources/${s.id}`, { config: { bucket: 'docs', access_key_id: 'AKIA2' } });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.message).toMatch(/secret_access_key/);

    expect((await call('DELETE', `/ingestion/sources/${s.id}`)).status).toBe(204);
    const gone = await call('GET', `/ingestion/sources/${s.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('source_not_found');
    expect((await call('DELETE', `/ingestion/sources/${s.id}`)).body.error).toBe('source_not_found');
  });

  it("keeps organizations apart: another organization's source is source_not_found everywhere", async () => {
    const mine = (await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'mine', config: {} })).body;
    expect(mine.config).toEqual({ storage_provider: 's3', sync_mode: 'full' });
    const theirs = (await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'theirs', config: {} }, other)).body;
    for (const [method, path, body] of [
      ['GET', `/ingestion/sources/${mine.id}`],
      ['PATCH', `/ingestion/sources/${mine.id}`, { name: 'taken' }],
      ['DELETE', `/ingestion/sources/${mine.id}`],
      ['GET', `/ingestion/sources/${mine.id}/references`],
      ['POST', `/ingestion/sources/${mine.id}/upload/init`, { dataset_id: '00000000-0000-4000-8000-000000000000', files: [{ name: 'a.txt', size_bytes: 1, content_type: 'text/plain' }] }],
    ] as [string, string, unknown?][]) {
      const r = await call(method, path, body, other);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error).toBe('source_not_found');
    }
    const ids = (await call('GET', '/ingestion/sources?limit=200', undefined, other)).body.sources.map((x: { id: string }) => x.id);
    expect(ids).toEqual([theirs.id]);
    expect((await call('GET', `/ingestion/sources/${mine.id}`)).status).toBe(200);
  });

  it('references, 409 source_in_use with the references body, force, unused and cleanup', async () => {
    const ds = (await call('POST', '/datasets', { name: 'refs', dim: 384 })).body;
    const used = (await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'scheduled', config: {} })).body;
    const uploading = (await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'uploading', config: {} })).body;
    const idle = (await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'idle', config: {} })).body;
    const schedule = (await call('POST', '/ingestion/schedules', { source_id: used.id, dataset_id: ds.id, cron: '0 3 * * *', timezone: 'Europe/Paris' })).body;
    // An upload that was started and not completed is a job in flight.
    const init = await call('POST', `/ingestion/sources/${uploading.id}/upload/init`, { dataset_id: ds.id, files: [{ name: 'a.txt', size_bytes: 5, content_type: 'text/plain' }] });
    expect(init.status).toBe(200);

    const refs = await call('GET', `/ingestion/sources/${used.id}/references`);
    expect(refs.body).toEqual({ schedules: [{ id: schedule.id, name: expect.any(String) }], schedule_count: 1, active_job_count: 0, in_use: true });
    expect((await call('GET', `/ingestion/sources/${uploading.id}/references`)).body).toEqual({ schedules: [], schedule_count: 0, active_job_count: 1, in_use: true });
    expect((await call('GET', `/ingestion/sources/${idle.id}/references`)).body).toEqual({ schedules: [], schedule_count: 0, active_job_count: 0, in_use: false });

    const refused = await call('DELETE', `/ingestion/sources/${used.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'source_in_use', references: refs.body });
    expect(refused.body.message).toMatch(/force=true/);
    expect((await call('DELETE', `/ingestion/sources/${uploading.id}?force=false`)).status).toBe(409);
    expect((await call('DELETE', `/ingestion/sources/${idle.id}?force=maybe`)).status).toBe(400);

    const unused = (await call('GET', '/ingestion/sources/unused?limit=200')).body;
    const unusedIds = unused.sources.map((x: { id: string }) => x.id);
    expect(unusedIds).toContain(idle.id);
    expect(unusedIds).not.toContain(used.id);
    expect(unusedIds).not.toContain(uploading.id);
    expect(unused.total).toBe(unusedIds.length);

    // force disables the schedule first, then deletes.
    expect((await call('DELETE', `/ingestion/sources/${used.id}?force=true`)).status).toBe(204);
    expect((await call('GET', `/ingestion/schedules/${schedule.id}`)).body).toMatchObject({ enabled: false, next_run_at: null });

    const cleaned = (await call('POST', '/ingestion/sources/cleanup')).body;
    expect(cleaned.deleted).toContainEqual({ id: idle.id, name: 'idle', type: 'file_upload' });
    expect(cleaned.count).toBe(cleaned.deleted.length);
    expect(cleaned.deleted.map((x: { id: string }) => x.id)).not.toContain(uploading.id);
    expect((await call('GET', `/ingestion/sources/${uploading.id}`)).status).toBe(200);
    expect((await call('GET', `/ingestion/sources/${idle.id}`)).status).toBe(404);
    // Another organization's unused sources are not this one's to clean.
    expect((await call('GET', '/ingestion/sources?limit=200', undefined, other)).body.total).toBe(1);
  });

  it('pages the list with limit and offset (max 200)', async () => {
    for (let i = 0; i < 3; i++) await call('POST', '/ingestion/sources', { source_type: 'web', name: `page-${i}`, config: { start_urls: ['https://a.example'] } });
    const all = (await call('GET', '/ingestion/sources?limit=200')).body;
    const page = (await call('GET', '/ingestion/sources?limit=2&offset=1')).body;
    expect(page).toMatchObject({ limit: 2, offset: 1, total: all.total });
    expect(page.sources).toEqual(all.sources.slice(1, 3));
    expect((await call('GET', '/ingestion/sources?limit=201')).status).toBe(400);
  });
}

/** Registers the ingestion tests in the calling describe (they run in order: the first ingests the folder the next ones read); the target runs with INGEST_FLAGS. */
export function ingestSuite(profile: TargetProfile, t: () => ContractTarget): void {
  const onCluster = profile.kind === 'cluster';
  let admin: string;
  let other: string;
  const api = ingestClient(() => t().url(), () => admin);
  /** A dataset made, provisioned and served through every URL of the target. */
  const dataset = async (name: string, extra: Record<string, unknown> = {}) => {
    const id = await api.dataset(name, extra);
    await t().settle(id, admin);
    return id;
  };

  beforeAll(async () => {
    // Organizations of their own: the job list and the metrics' schedules are the organization's.
    admin = (await t().newKey('ingest', 'admin')).key;
    other = (await t().newKey('ingest-acme', 'admin')).key;
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
    datasetId = await dataset('library', { hybrid: true });
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

  it('pages documents by cursor with a status filter', async () => {
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
  });

  it('downloads originals', async () => {
    const pdf = (await api.documents(datasetId)).find((d) => d.name === 'orbit.pdf');
    const res = await fetch(`${t().url()}/datasets/${datasetId}/documents/${pdf.id}/download`, { headers: { 'x-api-key': admin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(folder.find((f) => f.name === 'orbit.pdf')!.bytes as Uint8Array))).toBe(true);
    const missing = await api.call('GET', `/datasets/${datasetId}/documents/00000000-0000-4000-8000-000000000000/download`);
    expect(missing).toMatchObject({ status: 404, body: { error: 'document_not_found' } });
  });

  it('a downloaded original carries its name (Content-Disposition)', async () => {
    const pdf = (await api.documents(datasetId)).find((d) => d.name === 'orbit.pdf');
    const res = await fetch(`${t().url()}/datasets/${datasetId}/documents/${pdf.id}/download`, { headers: { 'x-api-key': admin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain('orbit.pdf');
    await res.arrayBuffer();
  });

  it('fails each bad file alone with its error_type; the good file in the same job is ingested', async () => {
    const ds = await dataset('bad files');
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
    const ds = await dataset('incremental');
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
    const fullDs = await dataset('full');
    const fullSrc = await api.source('full');
    const once = await api.upload(fullSrc, fullDs, [{ name: 'c.txt', type: 'text/plain', bytes: 'Gamma.' }]);
    const twice = await api.upload(fullSrc, fullDs, [{ name: 'c.txt', type: 'text/plain', bytes: 'Gamma.' }]);
    expect([once.documents_processed, twice.documents_processed]).toEqual([1, 1]);
    expect(await api.count(fullDs)).toBe(1);
    expect(await api.documents(fullDs)).toHaveLength(1);
  });

  it('runs a source again with POST /ingestion/jobs (every retained upload), and retries failed jobs as fresh ones', async () => {
    const ds = await dataset('rerun');
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
    const ds = await dataset('lost originals');
    const src = await api.source('lost originals');
    await api.upload(src, ds, [{ name: 'gone.txt', type: 'text/plain', bytes: 'This original will be lost.' }]);
    const [doc] = await api.documents(ds);
    const originals = t().uploadFiles().filter((f) => f.includes(src));
    expect(originals.length).toBeGreaterThan(0);
    for (const f of originals) rmSync(f);
    const r = await api.call('GET', `/datasets/${ds}/documents/${doc.id}/download`);
    expect(r.status).toBe(410);
    expect(r.body.error).toBe('document_unavailable');

    expect((await api.call('DELETE', `/datasets/${ds}`)).status).toBe(204);
    expect((await api.call('GET', `/datasets/${ds}/documents`)).body.error).toBe('dataset_not_found');
  });

  it('reports jobs, schedules and ingestion stages in /metrics', async () => {
    // Metrics are kept per process. The job and schedule gauges are read from the shared records, so
    // every process reports them (a cluster's each node); a stage's time is counted by the process
    // that ran it (a cluster's job runs on whichever node claimed it), so each stage is reported by
    // one of them at least (embedded: the one).
    const texts = await Promise.all(t().urls().map(async (url) => (await fetch(`${url}/metrics`)).text()));
    for (const text of texts) {
      expect(text).toMatch(/^sable_jobs\{kind="ingest",status="completed"\} \d+$/m);
      expect(text).toMatch(/^sable_jobs\{kind="ingest",status="failed"\} \d+$/m);
      expect(text).toMatch(/^sable_schedules\{enabled="true"\} 0$/m);
    }
    for (const stage of ['fetch', 'parse', 'chunk', 'embed', 'index']) {
      const line = new RegExp(`^sable_ingest_stage_seconds_total\\{stage="${stage}"\\} [0-9.e-]+$`, 'm');
      expect(texts.some((text) => line.test(text)), `a process reports the ${stage} stage`).toBe(true);
    }
  });
}
