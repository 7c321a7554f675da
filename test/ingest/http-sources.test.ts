// Sources over real HTTP: the nine types and their config schemas (the same schema checks create
// and validate, and is in /openapi.json), CRUD, secrets sealed at rest and masked in answers,
// references / unused / cleanup, 409 source_in_use and force, and two organizations.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');
const TYPES = ['web', 's3', 'gcs', 'gdrive', 'github', 'gitlab', 'jira', 'confluence', 'file_upload'];
const SECRET = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';

describe('ingestion sources over HTTP', () => {
  let dir: string;
  let svc: Service;
  let admin: string;
  let other: string;
  const call = async (method: string, path: string, body?: unknown, key = admin) => {
    const res = await fetch(svc.url + path, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const s3Config = { bucket: 'docs', access_key_id: 'AKIAEXAMPLE', secret_access_key: SECRET };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-sources-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir }, {}));
    admin = svc.createdAdminKey!;
    other = JSON.parse(execFileSync(process.execPath, [CLI, 'keys', 'create', '--org', 'acme', '--role', 'admin', '--data-dir', dir]).toString()).key;
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
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
    // Nowhere in the control store's file is the secret in the clear.
    expect(statSync(join(dir, 'control.mdb')).isFile()).toBe(true);
    expect(readFileSync(join(dir, 'control.mdb')).includes(Buffer.from(SECRET))).toBe(false);
    expect(readFileSync(join(dir, 'control.mdb')).includes(Buffer.from('bucket of docs'))).toBe(true);

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
});
