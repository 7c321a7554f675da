// The jira connector against a local peer that speaks Jira Cloud's REST API v3 as jira.js calls
// it: issues by project keys and by JQL (paged), descriptions and comments from Atlassian
// Document Format, a rate limit waited out, validate with samples and a JQL that matches nothing,
// a wrong token named; an incremental run that re-reads only updated issues and drops deleted ones.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { startJira } from '../../testkit/peers/jira.js';
import { ingestClient } from '../support/ingest.js';

describe('jira sources', () => {
  let dir: string;
  let svc: Service;
  let jira: Awaited<ReturnType<typeof startJira>>;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);
  const config = { cloud_id: 'cloud-1', access_token: 'jira-token', project_keys: ['OPS'] };
  let datasetId: string;
  let sourceId: string;

  beforeAll(async () => {
    jira = await startJira({ cloudId: 'cloud-1', tokens: new Set(['jira-token']) });
    jira.issues.push(
      { id: '1001', key: 'OPS-1', summary: 'Disk alarm on db-3', description: 'The disk of db-3 fills up every Sunday night.\n\nLogs rotate too late.', status: 'Done', updated: '2026-11-01T10:00:00.000+0000', comments: [{ author: 'Ada', body: 'Moved log rotation to Saturday.' }, { author: 'Linus', body: 'Confirmed fixed.' }, { author: 'Grace', body: 'Closing.' }] },
      { id: '1002', key: 'OPS-2', summary: 'Certificate renewal', description: 'The TLS certificate of the portal expires on March 3.', status: 'Open', updated: '2026-11-02T10:00:00.000+0000', comments: [] },
      { id: '1003', key: 'OPS-3', summary: 'VPN flaps', description: 'The office VPN drops every forty minutes.', status: 'Open', updated: '2026-11-03T10:00:00.000+0000', comments: [] },
      { id: '2001', key: 'WEB-1', summary: 'Landing page', description: 'Not an OPS issue.', status: 'Open', updated: '2026-11-03T10:00:00.000+0000', comments: [] },
    );
    dir = mkdtempSync(join(tmpdir(), 'sable-jira-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'atlassian-api-url': jira.url }, {}));
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await jira.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('validates: samples, a JQL that matches nothing, a wrong token', async () => {
    const ok = await api.call('POST', '/ingestion/sources/validate', { source_type: 'jira', config });
    expect(ok.body.success, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.samples[0]).toEqual({ title: 'OPS-1 Disk alarm on db-3', url: `${jira.url}/site/browse/OPS-1` });
    const none = await api.call('POST', '/ingestion/sources/validate', { source_type: 'jira', config: { ...config, jql: 'status = Cancelled' } });
    expect(none.body.warnings).toEqual(['the JQL matches no issue: status = Cancelled']);
    const wrong = await api.call('POST', '/ingestion/sources/validate', { source_type: 'jira', config: { ...config, access_token: 'nope' } });
    expect(wrong.body).toMatchObject({ success: false, message: expect.stringContaining('refused the token') });
  });

  it("ingests the projects' issues with their comments, waiting out a rate limit", async () => {
    jira.rateLimit(1);
    datasetId = await api.dataset('ops');
    sourceId = (await api.call('POST', '/ingestion/sources', { source_type: 'jira', name: 'ops tracker', config })).body.id;
    const started = await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId });
    const job = await api.job(started.body.id ?? started.body.job_id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const docs = await api.documents(datasetId);
    expect(docs.map((d) => d.name).sort()).toEqual(['OPS-1 Disk alarm on db-3', 'OPS-2 Certificate renewal', 'OPS-3 VPN flaps']);
    const hit = (await api.search(datasetId, 'what was done about log rotation?'))[0];
    expect(hit.doc_value).toContain('Moved log rotation to Saturday');
    expect(hit.doc_value).toContain('Closing.');
    expect(hit.metadata.url).toBe(`${jira.url}/site/browse/OPS-1`);
  });

  it('an incremental run re-reads only updated issues and removes deleted ones', async () => {
    jira.issues[1].description = 'The TLS certificate of the portal was renewed until 2028.';
    jira.issues[1].updated = '2026-11-20T10:00:00.000+0000';
    jira.issues.splice(2, 1);
    const reads = () => jira.requests.filter((r) => /\/issue\/\d+$/.test(r.path.split('?')[0])).length;
    const before = reads();
    const started = await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId });
    const job = await api.job(started.body.id ?? started.body.job_id);
    expect(job.message).toMatch(/1 document\(s\) ingested, 1 unchanged, 0 failed.*1 removed/);
    expect(reads() - before).toBe(1);
    expect((await api.search(datasetId, 'until when is the portal certificate valid?'))[0].doc_value).toContain('2028');
  });
});
