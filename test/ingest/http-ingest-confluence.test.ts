// The confluence connector against a local peer speaking the Confluence REST API v2, at a site
// (base_url, basic auth) and through the Atlassian gateway (cloud_id, OAuth token): pages of the
// chosen spaces (cursor pages), storage-format bodies as HTML, attachments, validate with samples
// and a space the credentials do not see; an incremental run that re-reads only pages whose
// version changed and removes deleted ones.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { startConfluence } from '../../testkit/peers/confluence.js';
import { pdfOf } from '../support/documents.js';
import { ingestClient } from '../support/ingest.js';

describe('confluence sources', () => {
  let dir: string;
  let svc: Service;
  let wiki: Awaited<ReturnType<typeof startConfluence>>;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);
  let basic: Record<string, unknown>;
  let datasetId: string;
  let sourceId: string;

  beforeAll(async () => {
    wiki = await startConfluence({ cloudId: 'cloud-9', basic: { user: 'ada@acme.test', token: 'api-token-1' }, tokens: new Set(['oauth-token-1']) });
    wiki.pages.push(
      { id: '1', space: 'ENG', title: 'Deploy checklist', html: '<p>Before a deploy, freeze the schema and <strong>notify the on-call</strong>.</p>', version: 3, attachments: [] },
      { id: '2', space: 'ENG', title: 'Incident policy', html: '<h2>Severity</h2><p>A severity one incident pages the whole team within five minutes.</p>', version: 1, attachments: [
        { id: 'att-1', title: 'escalation.pdf', mediaType: 'application/pdf', bytes: await pdfOf([['Escalation matrix.'], ['Escalate to the director after two hours.']], 'Escalation'), version: 1 },
      ] },
      { id: '3', space: 'ENG', title: 'Old runbook', html: '<p>Restart the mainframe on Fridays.</p>', version: 2, attachments: [] },
      { id: '4', space: 'HR', title: 'Holidays', html: '<p>Everyone gets thirty days of holiday.</p>', version: 1, attachments: [] },
    );
    basic = { base_url: `${wiki.url}/wiki`, auth_mode: 'basic', username: 'ada@acme.test', api_token: 'api-token-1', spaces: ['ENG'], include_attachments: true };
    dir = mkdtempSync(join(tmpdir(), 'sable-confluence-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'atlassian-api-url': wiki.url, 'allow-private-network': 'true' }, {}));
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await wiki.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('validates at a site and through the gateway: samples, an unknown space, wrong credentials', async () => {
    const ok = await api.call('POST', '/ingestion/sources/validate', { source_type: 'confluence', config: { ...basic, spaces: ['ENG', 'LEGAL'] } });
    expect(ok.body.success, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.samples[0]).toEqual({ title: 'ENG: Deploy checklist', url: `${wiki.url}/wiki/spaces/ENG/pages/1` });
    expect(ok.body.warnings).toEqual(['the credentials see no space LEGAL']);
    expect(JSON.stringify(ok.body)).not.toContain('api-token-1');
    const cloud = await api.call('POST', '/ingestion/sources/validate', { source_type: 'confluence', config: { cloud_id: 'cloud-9', auth_mode: 'oauth', oauth_credentials: { access_token: 'oauth-token-1' } } });
    expect(cloud.body.samples.map((s: { title: string }) => s.title)).toContain('HR: Holidays');
    const wrong = await api.call('POST', '/ingestion/sources/validate', { source_type: 'confluence', config: { ...basic, api_token: 'nope' } });
    expect(wrong.body).toMatchObject({ success: false, message: expect.stringContaining('refused the credentials') });
  });

  it('ingests the pages of the chosen spaces and their attachments', async () => {
    datasetId = await api.dataset('wiki');
    sourceId = (await api.call('POST', '/ingestion/sources', { source_type: 'confluence', name: 'eng wiki', config: basic })).body.id;
    const job = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.job_id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const docs = await api.documents(datasetId);
    expect(docs.map((d) => d.name).sort()).toEqual(['Deploy checklist', 'Incident policy', 'Old runbook', 'escalation.pdf']);
    expect((await api.search(datasetId, 'who is notified before a deploy?'))[0].doc_value).toContain('notify the on-call');
    expect((await api.search(datasetId, 'when do we escalate to the director?'))[0].doc_value).toContain('two hours');
    expect(docs.find((d) => d.name === 'Incident policy').url).toBe(`${wiki.url}/wiki/spaces/ENG/pages/2`);
  });

  it('an incremental run re-reads only pages whose version changed and removes deleted ones', async () => {
    wiki.pages[0].html = '<p>Before a deploy, freeze the schema, notify the on-call and tag the release.</p>';
    wiki.pages[0].version = 4;
    wiki.pages.splice(2, 1);
    const reads = () => wiki.requests.filter((r) => /\/pages\/\d+\?body-format=storage/.test(r.path)).length;
    const before = reads();
    const job = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.job_id);
    expect(job.message).toMatch(/1 document\(s\) ingested, 2 unchanged, 0 failed.*1 removed/);
    expect(reads() - before).toBe(1);
    expect((await api.search(datasetId, 'what else happens before a deploy?'))[0].doc_value).toContain('tag the release');
  });
});
