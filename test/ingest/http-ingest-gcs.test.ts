// The gcs connector against a local peer speaking Google's token endpoint and the Cloud Storage
// JSON API as @google-cloud/storage calls it: a service-account key exchanged for a token (RFC
// 7523), objects by prefix and patterns (paged), validate with samples and an empty prefix, a
// wrong key named; an incremental run that reads only changed objects (md5Hash) and removes
// deleted ones.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { startGoogle } from '../../testkit/peers/gcs.js';
import { ingestClient } from '../support/ingest.js';

describe('gcs sources', () => {
  let dir: string;
  let svc: Service;
  let google: Awaited<ReturnType<typeof startGoogle>>;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);
  let config: Record<string, unknown>;
  let datasetId: string;
  let sourceId: string;
  const put = (name: string, text: string, type = 'text/plain') => {
    const bucket = google.buckets.get('acme-docs')!;
    bucket.set(name, { bytes: Buffer.from(text), contentType: type, generation: (bucket.get(name)?.generation ?? 0) + 1 });
  };

  beforeAll(async () => {
    google = await startGoogle();
    google.buckets.set('acme-docs', new Map());
    put('handbook/leave.txt', 'Parental leave is sixteen weeks at full pay.');
    put('handbook/travel.md', '# Travel\n\nBook trains for trips under four hours.', 'text/markdown');
    put('handbook/notes.bin', 'binary-ish', 'application/octet-stream');
    put('other/ignored.txt', 'Outside the prefix.');
    config = { bucket: 'acme-docs', prefix: 'handbook/', auth_mode: 'service_account', service_account_json: google.serviceAccount, file_patterns: ['*.txt', '*.md'] };
    dir = mkdtempSync(join(tmpdir(), 'sable-gcs-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'gcs-api-url': google.url, 'google-token-url': `${google.url}/token` }, {}));
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await google.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('validates with a service-account key: samples, an empty prefix, a key Google refuses', async () => {
    const ok = await api.call('POST', '/ingestion/sources/validate', { source_type: 'gcs', config });
    expect(ok.body.success, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.samples.map((s: { title: string }) => s.title)).toContain('handbook/leave.txt');
    expect(JSON.stringify(ok.body)).not.toContain('PRIVATE KEY');
    const empty = await api.call('POST', '/ingestion/sources/validate', { source_type: 'gcs', config: { ...config, prefix: 'nothing/' } });
    expect(empty.body.warnings).toEqual(['no objects under prefix nothing/']);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const forged = JSON.stringify({ ...JSON.parse(google.serviceAccount), private_key: privateKey });
    const wrong = await api.call('POST', '/ingestion/sources/validate', { source_type: 'gcs', config: { ...config, service_account_json: forged } });
    expect(wrong.body).toMatchObject({ success: false, message: expect.stringContaining('Google refused the credentials') });
  });

  it('ingests the objects under the prefix that match the patterns', async () => {
    datasetId = await api.dataset('handbook');
    sourceId = (await api.call('POST', '/ingestion/sources', { source_type: 'gcs', name: 'handbook bucket', config })).body.id;
    const job = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.job_id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect((await api.documents(datasetId)).map((d) => d.url).sort()).toEqual(['gs://acme-docs/handbook/leave.txt', 'gs://acme-docs/handbook/travel.md']);
    expect((await api.search(datasetId, 'how long is parental leave?'))[0].doc_value).toContain('sixteen weeks');
  });

  it('an incremental run reads only changed objects and removes deleted ones', async () => {
    put('handbook/leave.txt', 'Parental leave is twenty weeks at full pay.');
    google.buckets.get('acme-docs')!.delete('handbook/travel.md');
    put('handbook/remote.txt', 'Remote work is allowed three days a week.');
    const reads = () => google.requests.filter((r) => r.path.includes('alt=media')).length;
    const before = reads();
    const job = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.job_id);
    expect(job.message).toMatch(/2 document\(s\) ingested, 0 unchanged, 0 failed.*1 removed/);
    expect(reads() - before).toBe(2);
    expect((await api.search(datasetId, 'how long is parental leave?'))[0].doc_value).toContain('twenty weeks');
  });
});
