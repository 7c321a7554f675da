// The web connector against a local site on 127.0.0.1 (the service opts in with
// allow-private-network; without it the crawl is refused, naming the setting): robots.txt,
// depth, noindex and nofollow, canonical URLs, redirects, linked PDFs, out-of-domain links,
// selectors, custom headers; validate with samples and warnings; an incremental second run that
// adds, changes and removes pages without re-embedding the unchanged ones.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { pdfOf } from '../support/documents.js';
import { ingestClient } from '../support/ingest.js';

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

describe('web sources', () => {
  let dir: string;
  let svc: Service;
  let site: Awaited<ReturnType<typeof startSite>>;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);

  beforeAll(async () => {
    site = await startSite();
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
    dir = mkdtempSync(join(tmpdir(), 'sable-web-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'allow-private-network': 'true', 'web-politeness-ms': '0' }, {}));
  }, 60_000);
  afterAll(async () => {
    await svc.close();
    await site.close();
    rmSync(dir, { recursive: true, force: true });
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
    datasetId = await api.dataset('harbour');
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

  it('refuses a site on a private address unless the deployment allows it, naming the setting', async () => {
    const strictDir = mkdtempSync(join(tmpdir(), 'sable-web-strict-'));
    const strict = await startService(loadConfig({ port: '0', 'data-dir': strictDir }, {}));
    try {
      const r = await fetch(`${strict.url}/ingestion/sources/validate`, {
        method: 'POST',
        headers: { 'x-api-key': strict.createdAdminKey!, 'content-type': 'application/json' },
        body: JSON.stringify({ source_type: 'web', config: { start_urls: [`${site.base}/`] } }),
      });
      const body = await r.json();
      expect(body.success).toBe(false);
      expect(body.message).toContain('SABLE_ALLOW_PRIVATE_NETWORK=true');
    } finally {
      await strict.close();
      rmSync(strictDir, { recursive: true, force: true });
    }
  });
});
