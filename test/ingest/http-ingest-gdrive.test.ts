// The gdrive connector against a local peer speaking Google's token endpoint and the Drive API v3
// as @googleapis/drive calls it: a folder read recursively (paged), a file named by id, Google
// Docs and Sheets exported, `mime_types`, validate with samples and an unshared folder; an
// incremental run that reads only files whose checksum or version changed and removes deleted ones.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { startGoogle } from '../../testkit/peers/gcs.js';
import { ingestClient } from '../support/ingest.js';

describe('gdrive sources', () => {
  let dir: string;
  let svc: Service;
  let google: Awaited<ReturnType<typeof startGoogle>>;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);
  let config: Record<string, unknown>;
  let datasetId: string;
  let sourceId: string;

  beforeAll(async () => {
    google = await startGoogle();
    google.driveFiles.push(
      { id: 'f-team', name: 'Team', mimeType: 'application/vnd.google-apps.folder', parent: 'root-folder', content: '', version: 1 },
      { id: 'd-onboarding', name: 'Onboarding', mimeType: 'application/vnd.google-apps.document', parent: 'root-folder', content: 'New hires get a laptop and a mentor on their first day.', version: 3 },
      { id: 's-budget', name: 'Budget', mimeType: 'application/vnd.google-apps.spreadsheet', parent: 'f-team', content: 'item,amount\noffsite,12000\ntraining,8000\n', version: 2 },
      { id: 't-notes', name: 'notes.txt', mimeType: 'text/plain', parent: 'f-team', content: 'The team offsite is in Lisbon this year.', version: 1 },
      { id: 'form-1', name: 'Survey', mimeType: 'application/vnd.google-apps.form', parent: 'f-team', content: '', version: 1 },
      { id: 'x-loose', name: 'policy.md', mimeType: 'text/markdown', parent: 'elsewhere', content: '# Policy\n\nExpenses over 500 euros need approval.', version: 1 },
    );
    config = { folder_ids: ['root-folder'], file_ids: ['x-loose'], auth_mode: 'service_account', service_account_json: google.serviceAccount };
    dir = mkdtempSync(join(tmpdir(), 'sable-gdrive-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'gdrive-api-url': `${google.url}/`, 'google-token-url': `${google.url}/token` }, {}));
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await google.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('validates: samples, a folder not shared with the account', async () => {
    const ok = await api.call('POST', '/ingestion/sources/validate', { source_type: 'gdrive', config: { ...config, folder_ids: ['root-folder', 'not-shared'] } });
    expect(ok.body.success, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.samples.map((s: { title: string }) => s.title)).toEqual(['Team', 'Onboarding', 'policy.md']);
    expect(ok.body.warnings).toEqual(['folder not-shared is empty, or not shared with these credentials']);
  });

  it('ingests the folder recursively and the named file, exporting Docs and Sheets', async () => {
    datasetId = await api.dataset('drive');
    sourceId = (await api.call('POST', '/ingestion/sources', { source_type: 'gdrive', name: 'team drive', config })).body.id;
    const job = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.job_id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const docs = await api.documents(datasetId);
    expect(docs.map((d) => d.path).sort()).toEqual(['Onboarding', 'Team/Budget', 'Team/notes.txt', 'policy.md']);
    expect(docs.every((d) => d.status === 'ready'), JSON.stringify(docs)).toBe(true);
    expect((await api.search(datasetId, 'what do new hires get on day one?'))[0].doc_value).toContain('laptop and a mentor');
    expect((await api.search(datasetId, 'how much is budgeted for the offsite?')).some((h) => h.doc_value?.includes('12000'))).toBe(true);
    expect((await api.search(datasetId, 'which expenses need approval?'))[0].doc_value).toContain('500 euros');
  });

  it('mime_types narrows what is read; an incremental run reads only changed files', async () => {
    const only = await api.call('POST', '/ingestion/sources/validate', { source_type: 'gdrive', config: { ...config, mime_types: ['text/plain'] } });
    expect(only.body.success).toBe(true);
    const doc = google.driveFiles.find((f) => f.id === 'd-onboarding')!;
    doc.content = 'New hires get a laptop, a mentor and a welcome lunch on their first day.';
    doc.version = 4;
    google.driveFiles.splice(google.driveFiles.findIndex((f) => f.id === 't-notes'), 1);
    const reads = () => google.requests.filter((r) => /\/drive\/v3\/files\/[^/?]+(\/export)?\?/.test(r.path) && (r.path.includes('alt=media') || r.path.includes('/export'))).length;
    const before = reads();
    const job = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.job_id);
    expect(job.message).toMatch(/1 document\(s\) ingested, 2 unchanged, 0 failed.*1 removed/);
    expect(reads() - before).toBe(1);
    expect((await api.search(datasetId, 'what do new hires get on day one?'))[0].doc_value).toContain('welcome lunch');
  });
});
