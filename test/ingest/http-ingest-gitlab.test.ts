// The gitlab connector against a local peer speaking the GitLab REST API v4 as gitbeaker calls
// it (self-managed URL, access token, paging by Link headers): a group's projects and a named
// project, files of the default and active branches by globs, merge requests with discussions,
// direct commits; validate with samples and what the token cannot see; an incremental run that
// fetches only changed blobs and removes deleted files.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { blobSha } from '../../testkit/peers/github.js';
import { startGitLab, type LabProject } from '../../testkit/peers/gitlab.js';
import { ingestClient } from '../support/ingest.js';

const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

describe('gitlab sources', () => {
  let dir: string;
  let svc: Service;
  let lab: Awaited<ReturnType<typeof startGitLab>>;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);
  let infra: LabProject;
  let config: Record<string, unknown>;
  let datasetId: string;
  let sourceId: string;

  beforeAll(async () => {
    lab = await startGitLab({ tokens: new Set(['glpat-1']) });
    infra = {
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
    config = { gitlab_url: lab.url, auth_mode: 'token', access_token: 'glpat-1', groups: ['platform'], exclude_globs: ['**/*.md'], include_globs: ['**/*'] };
    dir = mkdtempSync(join(tmpdir(), 'sable-gitlab-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'allow-private-network': 'true' }, {}));
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await lab.close();
    rmSync(dir, { recursive: true, force: true });
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
    datasetId = await api.dataset('infra');
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
});
