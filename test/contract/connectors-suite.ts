// Connectors over HTTP against local peers (testkit/peers/), as bodies of tests run against a
// target (./target.ts): jira (Jira Cloud's REST API v3), gitlab (the GitLab REST API v4), web
// (a local site), gcs and gdrive (one Google peer: its token endpoint, Cloud Storage, Drive),
// github (the GitHub REST API as an App) and confluence (the Confluence REST API v2).
// test/ingest/http-ingest-{jira,gitlab,web,gcs,gdrive,github,confluence}.test.ts run them embedded,
// test/cluster/contract-three-nodes-2.test.ts on a three-node cluster. A peer listens on
// 127.0.0.1 in the test process (cluster nodes reach it too) and is started before the target,
// which is started with the flags the peer's starter names.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import { startConfluence } from '../../testkit/peers/confluence.js';
import { startGoogle } from '../../testkit/peers/gcs.js';
import { blobSha, startGitHub, type PeerRepo } from '../../testkit/peers/github.js';
import { startGitLab, type LabProject } from '../../testkit/peers/gitlab.js';
import { startJira } from '../../testkit/peers/jira.js';
import { pdfOf } from '../support/documents.js';
import { ingestClient } from '../support/ingest.js';
import type { ContractTarget, TargetProfile } from './target.js';

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

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

type Page = { status?: number; type?: string; body: string | Uint8Array; headers?: Record<string, string> };

/** A small site whose pages the test changes between runs; it records every request. */
async function startSite() {
  const pages = new Map<string, Page>();
  const requests: { method: string; path: string; headers: IncomingMessage['headers'] }[] = [];
  /** Paths that answer 429 (Retry-After: 1) once before their page. */
  const limited = new Set<string>();
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method!, path: req.url!, headers: req.headers });
    if (limited.delete(req.url!)) return void res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('slow down');
    const page = pages.get(req.url!.split('#')[0]);
    if (!page) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(page.status ?? 200, { 'content-type': page.type ?? 'text/html; charset=utf-8', ...page.headers });
    res.end(req.method === 'HEAD' ? undefined : page.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, pages, requests, limited, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const html = (title: string, body: string, head = '') => `<!doctype html><html><head><title>${title}</title>${head}</head><body><nav>menu links</nav><main>${body}</main></body></html>`;

export type WebSite = Awaited<ReturnType<typeof startSite>>;

/** The local site with its pages; the target runs with `{ 'allow-private-network': 'true', 'web-politeness-ms': '0' }`. */
export async function startWebSite(): Promise<WebSite> {
  const site = await startSite();
  const p = site.pages;
  p.set('/robots.txt', { type: 'text/plain', body: 'User-agent: *\nDisallow: /private/\n' });
  p.set('/', {
    body: html('Home', `<h1>Harbour guide</h1><p>Welcome to the harbour guide.</p>
      <a href="/guide">guide</a> <a href="/guide#tides">tides</a> <a href="/private/secret">secret</a>
      <a href="/docs/manual.pdf">manual</a> <a href="https://example.org/elsewhere">elsewhere</a>
      <a href="/hidden">hidden</a> <a href="/alias">alias</a> <a href="/moved">moved</a> <a href="/ignored" rel="nofollow">ignored</a>`),
    headers: { etag: '"home-1"' },
  });
  p.set('/guide', { body: html('Lighthouse', '<p>The lighthouse keeper climbs 217 steps every evening to light the lamp.</p><a href="/deep/1">deeper</a>'), headers: { etag: '"guide-1"' } });
  p.set('/deep/1', { body: html('Deep one', '<p>Depth one talks about anchors and chains.</p><a href="/deep/2">deeper</a>') });
  p.set('/deep/2', { body: html('Deep two', '<p>Depth two is past the crawl depth.</p>') });
  p.set('/hidden', { body: html('Hidden', '<p>This page asks not to be indexed.</p><a href="/from-hidden">on</a>', '<meta name="robots" content="noindex">') });
  p.set('/from-hidden', { body: html('Tides', '<p>Spring tides come twice a month, at new and full moon.</p>') });
  p.set('/alias', { body: html('Lighthouse (alias)', '<p>The lighthouse keeper climbs 217 steps every evening to light the lamp.</p>', '<link rel="canonical" href="/guide">') });
  p.set('/moved', { status: 301, body: '', headers: { location: '/harbour-master' } });
  p.set('/harbour-master', { body: html('Harbour master', '<p>The harbour master assigns berths to arriving ships.</p>') });
  p.set('/private/secret', { body: html('Secret', '<p>The vault code is 4711.</p>') });
  p.set('/ignored', { body: html('Ignored', '<p>Nobody follows this link.</p>') });
  p.set('/docs/manual.pdf', { type: 'application/pdf', body: await pdfOf([['Crane manual.'], ['The crane lifts forty tonnes at most.']], 'Crane'), headers: { etag: '"pdf-1"' } });
  return site;
}

/** Registers the web tests in the calling describe (in order: each reads what the one before crawled). */
export function webSuite(profile: TargetProfile, t: () => ContractTarget, peer: () => WebSite): void {
  const can = (c: Parameters<typeof profile.can.has>[0]) => profile.can.has(c);
  const { api, dataset } = client(t, 'web');
  let site: WebSite;
  beforeAll(() => {
    site = peer();
  });

  let datasetId: string;
  let sourceId: string;
  const config = () => ({ start_urls: [`${site.base}/`], max_depth: 2, headers: { 'x-crawl-token': 'abc' }, sync_mode: 'incremental' });

  it('validates by reading the start page: samples and warnings', async () => {
    const ok = await api.call('POST', '/ingestion/sources/validate', { source_type: 'web', config: config() });
    expect(ok.body.success, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.samples[0]).toEqual({ title: 'Home', url: `${site.base}/` });
    expect(ok.body.samples.map((s: { url: string }) => s.url)).toContain(`${site.base}/guide`);
    const blocked = await api.call('POST', '/ingestion/sources/validate', { source_type: 'web', config: { start_urls: [`${site.base}/private/secret`] } });
    expect(blocked.body.warnings.join(' ')).toContain('robots.txt');
    const down = await api.call('POST', '/ingestion/sources/validate', { source_type: 'web', config: { start_urls: ['http://127.0.0.1:9/'] } });
    expect(down.body.success).toBe(false);
    expect(down.body.message).not.toContain('    at ');
  });

  it('crawls the site: pages within depth and domain, robots obeyed, noindex followed but not kept, canonical once, redirects, linked PDFs, a 429 waited out', async () => {
    site.limited.add('/guide');
    datasetId = await dataset('harbour');
    const src = await api.call('POST', '/ingestion/sources', { source_type: 'web', name: 'harbour site', config: config() });
    sourceId = src.body.id;
    const started = await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const job = await api.job(started.body.id ?? started.body.job_id);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    const docs = await api.documents(datasetId);
    const urls = docs.map((d) => d.url).sort();
    expect(urls).toEqual(
      [`${site.base}/`, `${site.base}/guide`, `${site.base}/deep/1`, `${site.base}/from-hidden`, `${site.base}/harbour-master`, `${site.base}/docs/manual.pdf`].sort(),
    );
    expect(docs.every((d) => d.status === 'ready')).toBe(true);
    expect(docs.find((d) => d.url === `${site.base}/guide`).name).toBe('Lighthouse');
    expect(site.requests.some((r) => r.path.startsWith('/private/'))).toBe(false);
    expect(site.requests.some((r) => r.path === '/ignored')).toBe(false);
    expect(site.requests.filter((r) => r.path !== '/robots.txt').every((r) => r.headers['x-crawl-token'] === 'abc')).toBe(true);
    // Each page was downloaded once in the run (listing keeps the bytes for parsing); /guide after its 429.
    expect(site.requests.filter((r) => r.method === 'GET' && r.path === '/guide').length).toBe(2);
    expect(site.requests.filter((r) => r.method === 'GET' && r.path === '/deep/1').length).toBe(1);
    const hits = await api.search(datasetId, 'how many steps does the keeper climb?');
    expect(hits[0].doc_value).toContain('217 steps');
    expect(hits[0].metadata.source_type).toBe('web');
    const crane = await api.search(datasetId, 'how much can the crane lift?');
    expect(crane[0].doc_value).toContain('forty tonnes');
  });

  it('an incremental run adds, changes and removes pages, and leaves the unchanged ones alone', async () => {
    const before = new Map((await api.documents(datasetId)).map((d) => [d.url, d]));
    const p = site.pages;
    p.set('/guide', { body: html('Lighthouse', '<p>The lighthouse keeper now climbs 230 steps since the tower was raised.</p><a href="/deep/1">deeper</a>'), headers: { etag: '"guide-2"' } });
    p.delete('/harbour-master');
    p.set('/', { ...p.get('/')!, body: String(p.get('/')!.body).replace('<a href="/moved">moved</a>', '<a href="/weather">weather</a>'), headers: { etag: '"home-2"' } });
    p.set('/weather', { body: html('Weather', '<p>Fog closes the harbour about ten days a year.</p>') });
    const started = await api.call('POST', '/ingestion/jobs', { source_id: sourceId, dataset_id: datasetId });
    const job = await api.job(started.body.id ?? started.body.job_id);
    expect(job.status).toBe('completed');
    expect(job.message).toMatch(/3 document\(s\) ingested, 3 unchanged, 0 failed.*1 removed/);
    const after = new Map((await api.documents(datasetId)).map((d) => [d.url, d]));
    expect(after.has(`${site.base}/harbour-master`)).toBe(false);
    expect(after.has(`${site.base}/weather`)).toBe(true);
    for (const unchanged of ['/deep/1', '/from-hidden', '/docs/manual.pdf']) expect(after.get(site.base + unchanged).updated_at).toBe(before.get(site.base + unchanged).updated_at);
    expect((await api.search(datasetId, 'how many steps does the keeper climb?'))[0].doc_value).toContain('230 steps');
    // The PDF kept its ETag: it was not downloaded again.
    expect(site.requests.filter((r) => r.method === 'GET' && r.path === '/docs/manual.pdf').length).toBe(1);
  });

  // own-service: the setting is the deployment's, so the test needs a second service started without it.
  it.skipIf(!can('own-service'))('refuses a site on a private address unless the deployment allows it, naming the setting', async () => {
    const strict = await t().startOwn!({ 'allow-private-network': 'false' });
    try {
      const r = await fetch(`${strict.url}/ingestion/sources/validate`, {
        method: 'POST',
        headers: { 'x-api-key': strict.admin, 'content-type': 'application/json' },
        body: JSON.stringify({ source_type: 'web', config: { start_urls: [`${site.base}/`] } }),
      });
      const body = await r.json();
      expect(body.success).toBe(false);
      expect(body.message).toContain('SABLE_ALLOW_PRIVATE_NETWORK=true');
    } finally {
      await strict.close();
    }
  });
}

export type GooglePeer = Awaited<ReturnType<typeof startGoogle>>;

/**
 * The Google peer with the gcs suite's bucket and the gdrive suite's files (one peer serves both:
 * the token endpoint is one setting); the target runs with googleFlags(google).
 */
export async function startGooglePeer(): Promise<GooglePeer> {
  const google = await startGoogle();
  google.buckets.set('acme-docs', new Map());
  putObject(google, 'handbook/leave.txt', 'Parental leave is sixteen weeks at full pay.');
  putObject(google, 'handbook/travel.md', '# Travel\n\nBook trains for trips under four hours.', 'text/markdown');
  putObject(google, 'handbook/notes.bin', 'binary-ish', 'application/octet-stream');
  putObject(google, 'other/ignored.txt', 'Outside the prefix.');
  google.driveFiles.push(
    { id: 'f-team', name: 'Team', mimeType: 'application/vnd.google-apps.folder', parent: 'root-folder', content: '', version: 1 },
    { id: 'd-onboarding', name: 'Onboarding', mimeType: 'application/vnd.google-apps.document', parent: 'root-folder', content: 'New hires get a laptop and a mentor on their first day.', version: 3 },
    { id: 's-budget', name: 'Budget', mimeType: 'application/vnd.google-apps.spreadsheet', parent: 'f-team', content: 'item,amount\noffsite,12000\ntraining,8000\n', version: 2 },
    { id: 't-notes', name: 'notes.txt', mimeType: 'text/plain', parent: 'f-team', content: 'The team offsite is in Lisbon this year.', version: 1 },
    { id: 'form-1', name: 'Survey', mimeType: 'application/vnd.google-apps.form', parent: 'f-team', content: '', version: 1 },
    { id: 'x-loose', name: 'policy.md', mimeType: 'text/markdown', parent: 'elsewhere', content: '# Policy\n\nExpenses over 500 euros need approval.', version: 1 },
  );
  return google;
}

/** The settings that point a service at the Google peer. */
export const googleFlags = (google: GooglePeer) => ({ 'gcs-api-url': google.url, 'gdrive-api-url': `${google.url}/`, 'google-token-url': `${google.url}/token` });

function putObject(google: GooglePeer, name: string, text: string, type = 'text/plain') {
  const bucket = google.buckets.get('acme-docs')!;
  bucket.set(name, { bytes: Buffer.from(text), contentType: type, generation: (bucket.get(name)?.generation ?? 0) + 1 });
}

/** Registers the gcs tests in the calling describe (in order: each reads what the one before ingested). */
export function gcsSuite(_profile: TargetProfile, t: () => ContractTarget, peer: () => GooglePeer): void {
  const { api, dataset } = client(t, 'gcs');
  let google: GooglePeer;
  let config: Record<string, unknown>;
  let datasetId: string;
  let sourceId: string;
  const put = (name: string, text: string, type = 'text/plain') => putObject(google, name, text, type);
  beforeAll(() => {
    google = peer();
    config = { bucket: 'acme-docs', prefix: 'handbook/', auth_mode: 'service_account', service_account_json: google.serviceAccount, file_patterns: ['*.txt', '*.md'] };
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
    datasetId = await dataset('handbook');
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
}

/** Registers the gdrive tests in the calling describe (in order: each reads what the one before ingested). */
export function gdriveSuite(_profile: TargetProfile, t: () => ContractTarget, peer: () => GooglePeer): void {
  const { api, dataset } = client(t, 'gdrive');
  let google: GooglePeer;
  let config: Record<string, unknown>;
  let datasetId: string;
  let sourceId: string;
  beforeAll(() => {
    google = peer();
    config = { folder_ids: ['root-folder'], file_ids: ['x-loose'], auth_mode: 'service_account', service_account_json: google.serviceAccount };
  });

  it('validates: samples, a folder not shared with the account', async () => {
    const ok = await api.call('POST', '/ingestion/sources/validate', { source_type: 'gdrive', config: { ...config, folder_ids: ['root-folder', 'not-shared'] } });
    expect(ok.body.success, JSON.stringify(ok.body)).toBe(true);
    expect(ok.body.samples.map((s: { title: string }) => s.title)).toEqual(['Team', 'Onboarding', 'policy.md']);
    expect(ok.body.warnings).toEqual(['folder not-shared is empty, or not shared with these credentials']);
  });

  it('ingests the folder recursively and the named file, exporting Docs and Sheets', async () => {
    datasetId = await dataset('drive');
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
}

export interface GitHubPeer {
  gh: Awaited<ReturnType<typeof startGitHub>>;
  repo: PeerRepo;
}

/** The GitHub peer with its repositories; the target runs with githubSettings(peer) (flags, and the App's key as an environment variable only). */
export async function startGitHubPeer(): Promise<GitHubPeer> {
  const gh = await startGitHub({ appId: '4242', installationId: 77 });
  const repo: PeerRepo = {
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
  return { gh, repo };
}

/** The settings that make a service the peer's App: flags, and the private key, read from the environment only. */
export const githubSettings = ({ gh }: GitHubPeer) => ({
  flags: { 'github-api-url': gh.url, 'github-app-id': '4242' },
  env: { SABLE_GITHUB_APP_PRIVATE_KEY: gh.privateKey },
});

/** Registers the github tests in the calling describe (in order: each reads what the one before ingested). */
export function githubSuite(_profile: TargetProfile, t: () => ContractTarget, peer: () => GitHubPeer): void {
  const { api, dataset } = client(t, 'github');
  let gh: GitHubPeer['gh'];
  let repo: PeerRepo;
  beforeAll(() => {
    ({ gh, repo } = peer());
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
    datasetId = await dataset('code');
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
}

export type ConfluencePeer = Awaited<ReturnType<typeof startConfluence>>;

/**
 * The Confluence peer with its pages; the target runs with `{ 'atlassian-api-url': wiki.url,
 * 'allow-private-network': 'true' }` (a site's base_url on 127.0.0.1), or with an
 * atlassian-api-url that forwards /ex/confluence/ to it (test/support/path-router.ts).
 */
export async function startConfluencePeer(): Promise<ConfluencePeer> {
  const wiki = await startConfluence({ cloudId: 'cloud-9', basic: { user: 'ada@acme.test', token: 'api-token-1' }, tokens: new Set(['oauth-token-1']) });
  wiki.pages.push(
    { id: '1', space: 'ENG', title: 'Deploy checklist', html: '<p>Before a deploy, freeze the schema and <strong>notify the on-call</strong>.</p>', version: 3, attachments: [] },
    { id: '2', space: 'ENG', title: 'Incident policy', html: '<h2>Severity</h2><p>A severity one incident pages the whole team within five minutes.</p>', version: 1, attachments: [
      { id: 'att-1', title: 'escalation.pdf', mediaType: 'application/pdf', bytes: await pdfOf([['Escalation matrix.'], ['Escalate to the director after two hours.']], 'Escalation'), version: 1 },
    ] },
    { id: '3', space: 'ENG', title: 'Old runbook', html: '<p>Restart the mainframe on Fridays.</p>', version: 2, attachments: [] },
    { id: '4', space: 'HR', title: 'Holidays', html: '<p>Everyone gets thirty days of holiday.</p>', version: 1, attachments: [] },
  );
  return wiki;
}

/** Registers the confluence tests in the calling describe (in order: each reads what the one before ingested). */
export function confluenceSuite(_profile: TargetProfile, t: () => ContractTarget, peer: () => ConfluencePeer): void {
  const { api, dataset } = client(t, 'confluence');
  let wiki: ConfluencePeer;
  let basic: Record<string, unknown>;
  let datasetId: string;
  let sourceId: string;
  beforeAll(() => {
    wiki = peer();
    basic = { base_url: `${wiki.url}/wiki`, auth_mode: 'basic', username: 'ada@acme.test', api_token: 'api-token-1', spaces: ['ENG'], include_attachments: true };
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
    datasetId = await dataset('wiki');
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
}
