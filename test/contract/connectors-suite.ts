// Connectors over HTTP against local peers (testkit/peers/), as bodies of tests run against a
// target (./target.ts): jira (Jira Cloud's REST API v3) and gitlab (the GitLab REST API v4).
// test/ingest/http-ingest-jira.test.ts and http-ingest-gitlab.test.ts run them embedded,
// test/cluster/contract-three-nodes-2.test.ts on a three-node cluster. A peer listens on
// 127.0.0.1 in the test process (cluster nodes reach it too) and is started before the target,
// which is started with the flags the peer's starter names.
import { beforeAll, expect, it } from 'vitest';
import { blobSha } from '../../testkit/peers/github.js';
import { startGitLab, type LabProject } from '../../testkit/peers/gitlab.js';
import { startJira } from '../../testkit/peers/jira.js';
import { ingestClient } from '../support/ingest.js';
import type { ContractTarget, TargetProfile } from './target.js';

const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

/** The suite's client in an organization of its own, with datasets served through every URL of the target. */
function client(t: () => ContractTarget, org: string) {
  let admin: string;
  const api = ingestClient(() => t().url(), () => admin);
  beforeAll(async () => {
    admin = (await t().newKey(org, 'admin')).key;
  });
  const dataset = async (name: string) => {
    const id = await api.dataset(name);
    await t().settle(id, admin);
    return id;
  };
  return { api, dataset };
}

export type JiraPeer = Awaited<ReturnType<typeof startJira>>;

/** The jira peer with its issues; the target runs with `{ 'atlassian-api-url': jira.url }`. */
export async function startJiraPeer(): Promise<JiraPeer> {
  const jira = await startJira({ cloudId: 'cloud-1', tokens: new Set(['jira-token']) });
  jira.issues.push(
    { id: '1001', key: 'OPS-1', summary: 'Disk alarm on db-3', description: 'The disk of db-3 fills up every Sunday night.\n\nLogs rotate too late.', status: 'Done', updated: '2026-11-01T10:00:00.000+0000', comments: [{ author: 'Ada', body: 'Moved log rotation to Saturday.' }, { author: 'Linus', body: 'Confirmed fixed.' }, { author: 'Grace', body: 'Closing.' }] },
    { id: '1002', key: 'OPS-2', summary: 'Certificate renewal', description: 'The TLS certificate of the portal expires on March 3.', status: 'Open', updated: '2026-11-02T10:00:00.000+0000', comments: [] },
    { id: '1003', key: 'OPS-3', summary: 'VPN flaps', description: 'The office VPN drops every forty minutes.', status: 'Open', updated: '2026-11-03T10:00:00.000+0000', comments: [] },
    { id: '2001', key: 'WEB-1', summary: 'Landing page', description: 'Not an OPS issue.', status: 'Open', updated: '2026-11-03T10:00:00.000+0000', comments: [] },
  );
  return jira;
}

/** Registers the jira tests in the calling describe (in order: each reads what the one before ingested). */
export function jiraSuite(_profile: TargetProfile, t: () => ContractTarget, peer: () => JiraPeer): void {
  const { api, dataset } = client(t, 'jira');
  const config = { cloud_id: 'cloud-1', access_token: 'jira-token', project_keys: ['OPS'] };
  let jira: JiraPeer;
  let datasetId: string;
  let sourceId: string;
  beforeAll(() => {
    jira = peer();
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
    datasetId = await dataset('ops');
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
}

export interface GitLabPeer {
  lab: Awaited<ReturnType<typeof startGitLab>>;
  infra: LabProject;
  config: Record<string, unknown>;
}

/** The gitlab peer with its projects; the target runs with `{ 'allow-private-network': 'true' }` (the peer is on 127.0.0.1). */
export async function startGitLabPeer(): Promise<GitLabPeer> {
  const lab = await startGitLab({ tokens: new Set(['glpat-1']) });
  const infra: LabProject = {
    id: 11,
    path: 'platform/infra',
    group: 'platform',
    defaultBranch: 'main',
    branches: new Map([
      ['main', { date: ago(20), files: new Map([['README.md', '# Infra\n\nTerraform state lives in the ops bucket.\n'], ['modules/dns.tf', '# The DNS zone TTL is 300 seconds.\nresource "dns" "zone" {}\n'], ['img/diagram.png', 'png']]) }],
      ['upgrade', { date: ago(2), files: new Map([['README.md', '# Infra\n\nThe upgrade branch moves clusters to version 1.31.\n']]) }],
    ]),
    mergeRequests: [{ iid: 3, title: 'Rotate the database password', description: 'Passwords rotate every sixty days.', state: 'merged', updated_at: ago(3), notes: [{ author: 'grace', body: 'Store it in the vault, not in CI variables.', path: 'ci.yml' }] }],
    commits: [
      { sha: 'c'.repeat(40), branch: 'main', title: 'Open port 8443 for the admin console', message: 'Open port 8443 for the admin console', date: ago(1), mr: null, diff: [{ new_path: 'firewall.tf', diff: '+8443' }] },
      { sha: 'd'.repeat(40), branch: 'main', title: 'Merge rotate password', message: 'Merge branch', date: ago(3), mr: 3, diff: [] },
    ],
  };
  lab.projects.push(infra, { id: 12, path: 'platform/tools/cli', group: 'platform/tools', defaultBranch: 'main', branches: new Map([['main', { date: ago(40), files: new Map([['main.go', '// The CLI retries three times before giving up.\npackage main\n']]) }]]), mergeRequests: [], commits: [] });
  const config = { gitlab_url: lab.url, auth_mode: 'token', access_token: 'glpat-1', groups: ['platform'], exclude_globs: ['**/*.md'], include_globs: ['**/*'] };
  return { lab, infra, config };
}

/** Registers the gitlab tests in the calling describe (in order: each reads what the one before ingested). */
export function gitlabSuite(_profile: TargetProfile, t: () => ContractTarget, peer: () => GitLabPeer): void {
  const { api, dataset } = client(t, 'gitlab');
  let lab: GitLabPeer['lab'];
  let infra: LabProject;
  let config: Record<string, unknown>;
  let datasetId: string;
  let sourceId: string;
  beforeAll(() => {
    ({ lab, infra, config } = peer());
  });

  it('validates: samples, a project and a group the token cannot see, a wrong token', async () => {
    const ok = await api.call('POST', '/ingestion/sources/validate', { source_type: 'gitlab', config: { ...config, projects: ['platform/ghost'], groups: ['platform', 'secret'] } });
    expect(ok.body.success, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.samples.map((s: { title: string }) => s.title).sort()).toEqual(['platform/infra', 'platform/tools/cli']);
    expect(ok.body.warnings).toEqual(['the token cannot see project platform/ghost', 'the token cannot see group secret']);
    const wrong = await api.call('POST', '/ingestion/sources/validate', { source_type: 'gitlab', config: { ...config, access_token: 'nope' } });
    expect(wrong.body).toMatchObject({ success: false, message: expect.stringContaining('refused the token') });
  });

  it("ingests the group's projects: files by globs, merge requests with discussions, direct commits", async () => {
    datasetId = await dataset('infra');
    sourceId = (await api.call('POST', '/ingestion/sources', { source_type: 'gitlab', name: 'platform', config: { ...config, exclude_globs: [] } })).body.id;
    const job = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.job_id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const paths = (await api.documents(datasetId)).map((d) => d.path).sort();
    expect(paths).toEqual(
      ['platform/infra/main/README.md', 'platform/infra/main/modules/dns.tf', 'platform/infra/upgrade/README.md', 'platform/infra/merge_requests/3', `platform/infra/commits/${'c'.repeat(40)}`, 'platform/tools/cli/main/main.go'].sort(),
    );
    expect((await api.search(datasetId, 'where should the database password be stored?')).some((h) => h.doc_value?.includes('vault'))).toBe(true);
    expect((await api.search(datasetId, 'which port was opened for the admin console?'))[0].doc_value).toContain('8443');
    expect(lab.requests.some((r) => r.path.includes('/repository/tree') && r.path.includes('page=2'))).toBe(true);
  });

  it('an incremental run fetches only changed blobs and removes deleted files', async () => {
    const main = infra.branches.get('main')!.files;
    main.set('modules/dns.tf', '# The DNS zone TTL is 60 seconds now.\nresource "dns" "zone" {}\n');
    main.delete('README.md');
    const before = lab.requests.filter((r) => r.path.includes('/repository/blobs/')).length;
    const job = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId })).body.job_id);
    expect(job.message).toMatch(/1 document\(s\) ingested, 4 unchanged, 0 failed.*1 removed/);
    const fetched = lab.requests.filter((r) => r.path.includes('/repository/blobs/')).slice(before).map((r) => r.path.split('/').pop());
    expect(fetched).toEqual([blobSha(main.get('modules/dns.tf')!)]);
    expect((await api.search(datasetId, 'what is the DNS zone TTL?'))[0].doc_value).toContain('60 seconds');
  });
}
