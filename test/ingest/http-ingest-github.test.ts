// The github connector against a local peer that speaks the GitHub REST API as Octokit sends it
// (App JWT, installation token, paging by Link headers, a rate limit): files of the default and
// recently pushed branches by globs and size, pull requests with comments and review threads,
// direct commits; validate with samples and a repository the installation cannot see; an
// incremental run that changes, adds and removes files without refetching unchanged blobs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { blobSha, startGitHub, type PeerRepo } from '../../testkit/peers/github.js';
import { ingestClient } from '../support/ingest.js';

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

describe('github sources', () => {
  let dir: string;
  let svc: Service;
  let gh: Awaited<ReturnType<typeof startGitHub>>;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);
  let repo: PeerRepo;

  beforeAll(async () => {
    gh = await startGitHub({ appId: '4242', installationId: 77 });
    repo = {
      full: 'acme/handbook',
      defaultBranch: 'main',
      installed: true,
      branches: new Map([
        ['main', { date: ago(30), files: new Map([
          ['README.md', '# Handbook\n\nThe on-call engineer answers pages within fifteen minutes.\n'],
          ['src/deploy.ts', 'export function deploy() {\n  // Deploys go out every Tuesday at ten in the morning.\n  return "tuesday";\n}\n'],
          ['docs/logo.png', 'not really a png'],
          ['vendor/big.txt', 'x'.repeat(5000)],
        ]) }],
        ['feature-x', { date: ago(1), files: new Map([['README.md', '# Handbook\n\nFeature X adds dark mode to the dashboard.\n']]) }],
        ['stale', { date: ago(60), files: new Map([['README.md', '# Old\n\nThis branch is stale.\n']]) }],
      ]),
      pulls: [
        { number: 7, title: 'Rotate the signing keys', body: 'Signing keys are rotated every ninety days.', state: 'closed', user: 'ada', updated_at: ago(2), comments: [{ user: 'linus', body: 'Approved after the audit.' }], reviews: [{ user: 'grace', body: 'Use the hardware module here.', path: 'src/keys.ts' }] },
        { number: 8, title: 'Add dark mode', body: 'Dark mode for the dashboard.', state: 'open', user: 'ada', updated_at: ago(1), comments: [], reviews: [] },
        { number: 9, title: 'Fix typo', body: 'A typo.', state: 'closed', user: 'bob', updated_at: ago(3), comments: [], reviews: [] },
      ],
      commits: [
        { sha: 'a'.repeat(40), branch: 'main', message: 'Hotfix: raise the upload limit to 200 MB', date: ago(2), pull: null, files: [{ filename: 'src/limits.ts', status: 'modified', patch: '-100\n+200' }] },
        { sha: 'b'.repeat(40), branch: 'main', message: 'Rotate the signing keys (#7)', date: ago(2), pull: 7, files: [] },
      ],
    };
    gh.repos.set(repo.full, repo);
    gh.repos.set('acme/secret', { ...repo, full: 'acme/secret', installed: false });
    dir = mkdtempSync(join(tmpdir(), 'sable-github-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'github-api-url': gh.url, 'github-app-id': '4242' }, { SABLE_GITHUB_APP_PRIVATE_KEY: gh.privateKey }));
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await gh.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const config = { installation_id: 77, repositories: ['acme/handbook'], ref_mode: 'active', active_branch_days: 7, exclude_globs: ['vendor/**'], max_file_size_bytes: 2000 };
  let datasetId: string;
  let sourceId: string;

  it('validates through the installation: samples, a repository it cannot see, a wrong installation', async () => {
    const ok = await api.call('POST', '/ingestion/sources/validate', { source_type: 'github', config: { ...config, repositories: ['acme/handbook', 'acme/secret'] } });
    expect(ok.body.success, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.samples.map((s: { title: string }) => s.title)).toContain('acme/handbook/README.md');
    expect(ok.body.warnings).toEqual(['the installation cannot see acme/secret (install the App on it, or grant it the repository)']);
    const wrong = await api.call('POST', '/ingestion/sources/validate', { source_type: 'github', config: { ...config, installation_id: 78 } });
    expect(wrong.body.success).toBe(false);
    expect(wrong.body.message).toMatch(/installation 78/);
    expect(wrong.body.message).not.toContain('    at ');
  });

  it('ingests files of the default and active branches, pull requests with their threads, and direct commits', async () => {
    gh.rateLimit(1);
    datasetId = await api.dataset('code');
    sourceId = (await api.call('POST', '/ingestion/sources', { source_type: 'github', name: 'handbook repo', config })).body.id;
    const started = await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const job = await api.job(started.body.id ?? started.body.job_id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const docs = await api.documents(datasetId);
    const paths = docs.map((d) => d.path).sort();
    expect(paths).toEqual(
      ['acme/handbook/main/README.md', 'acme/handbook/main/src/deploy.ts', 'acme/handbook/feature-x/README.md', 'acme/handbook/pulls/7', 'acme/handbook/pulls/8', 'acme/handbook/pulls/9', `acme/handbook/commits/${'a'.repeat(40)}`].sort(),
    );
    expect(docs.every((d) => d.status === 'ready'), JSON.stringify(docs.filter((d) => d.status !== 'ready'))).toBe(true);
    const review = (await api.search(datasetId, 'which module should hold the signing keys?')).find((h) => h.doc_value?.includes('hardware module'))!;
    expect(review, 'the review thread is searchable').toBeDefined();
    expect(review.metadata.url).toBe(`${gh.url}/html/acme/handbook/pull/7`);
    expect((await api.search(datasetId, 'when do deploys go out?'))[0].doc_value).toContain('every Tuesday');
    expect((await api.search(datasetId, 'what was the upload limit hotfix?'))[0].doc_value).toContain('200 MB');
    // Paging followed (page size 2) and the rate limit waited out.
    expect(gh.requests.some((r) => r.path.includes('/pulls?') && r.path.includes('page=2'))).toBe(true);
  });

  it('an incremental run refetches only what changed, adds new files and removes deleted ones', async () => {
    const main = repo.branches.get('main')!.files;
    main.set('README.md', '# Handbook\n\nThe on-call engineer now answers pages within ten minutes.\n');
    main.delete('src/deploy.ts');
    main.set('docs/runbook.md', '# Runbook\n\nRestart the queue workers before the database.\n');
    const blobsBefore = gh.requests.filter((r) => r.path.includes('/git/blobs/')).length;
    const started = await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId });
    const job = await api.job(started.body.id ?? started.body.job_id);
    expect(job.status).toBe('completed');
    expect(job.message).toMatch(/2 document\(s\) ingested, 5 unchanged, 0 failed.*1 removed/);
    const fetched = gh.requests.filter((r) => r.path.includes('/git/blobs/')).slice(blobsBefore).map((r) => r.path.split('/').pop());
    expect(fetched.sort()).toEqual([blobSha(main.get('README.md')!), blobSha(main.get('docs/runbook.md')!)].sort());
    const paths = (await api.documents(datasetId)).map((d) => d.path);
    expect(paths).not.toContain('acme/handbook/main/src/deploy.ts');
    expect(paths).toContain('acme/handbook/main/docs/runbook.md');
    expect((await api.search(datasetId, 'how fast does the on-call engineer answer?'))[0].doc_value).toContain('ten minutes');
  });
});
