// The dashboard in a real browser (issue 31, phase 1): headless Chromium (Debian's `chromium`,
// driven by playwright-core) against a service started in this process. It signs in with the
// admin key, creates a text dataset with a typed field on the page, searches it with a filter
// after vectors went in through the API, opens the dataset's page, deletes a dataset after the
// confirmation, and signs out (the service refuses the session token after, the tab's storage is
// empty); a member key does not see the admin-only action; at 390 px the nav folds behind Menu.
// The page loads nothing from another origin and neither the key nor the session token reaches
// the page's text or its console.
// The page and its assets are checked over raw HTTP on both adapters: cache headers, CSP, gzip,
// ETag, 404 for unknown files and traversal, 503 when the dashboard is not built.
// Screenshots of each page go to bench/.cache/dashboard-shots/ (docs/dashboard/ holds copies).
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { ControlStore } from '../../dist/catalog/store.js';
import { startService } from '../../dist/control-plane/app.js';
import { createKey, ensureOrg } from '../../dist/control-plane/auth/keys.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { dashboardHarness, expectNothingLeaked } from './support.js';

const NOTES = [
  { id: 1, metadata: { text: 'Boil pasta in plenty of salted water until it is al dente.', year: 2024, lang: 'en' } },
  { id: 2, metadata: { text: 'Spaghetti carbonara: eggs, cheese, pepper and cured pork, no cream.', year: 2019, lang: 'en' } },
  { id: 3, metadata: { text: 'Deploy the app with cf push and watch the logs.', year: 2023, lang: 'en' } },
  { id: 4, metadata: { text: 'Les pâtes se cuisent dans beaucoup d’eau salée.', year: 2022, lang: 'fr' } },
  // Enough values of one kind for the service to infer `lang` as a typed field.
  ...Array.from({ length: 20 }, (_, i) => ({ id: 10 + i, metadata: { text: `Release note ${i}: the indexer got faster at step ${i}.`, year: 2020 + (i % 5), lang: 'en' } })),
];

/** A 16-d vector that differs with `i` (sines: no randomness to seed). */
const vector = (i: number) => Array.from({ length: 16 }, (_, d) => Math.sin(i * 0.37 + d * 1.3));

describe('the dashboard in Chromium', () => {
  const h = dashboardHarness('sable-dashboard-');
  const { api, newPage, shot, signIn, requests, consoleLines, tokens } = h;
  let memberKey: string;

  /** The status of a session-authenticated route asked with `token`. */
  const sessionRoute = async (token: string) => (await fetch(`${h.svc.url}/sources/info?source_path=x`, { headers: { authorization: `Bearer ${token}` } })).status;

  /** A vector dataset whose buffer seals into an indexed partition, under an SLA: what the tuner works on. */
  const productsWithIndex = async (): Promise<string> => {
    const { id } = (await api('POST', '/datasets', { name: 'products', dim: 16, metric: 'l2' })).body;
    await api('POST', `/datasets/${id}/ensure-engine`);
    expect((await api('PUT', `/datasets/${id}/promotion-policy`, { max_buffer_vectors: 1000 })).status).toBe(200);
    const vectors = Array.from({ length: 3000 }, (_, i) => ({ id: i + 1, values: vector(i), metadata: { category: ['books', 'games', 'tools'][i % 3]!, price: (i * 37) % 100 } }));
    expect((await api('POST', `/datasets/${id}/insert`, { vectors })).status).toBe(200);
    expect((await api('PUT', `/datasets/${id}/sla`, { target_p99_us: 1000 })).status).toBe(200);
    for (let i = 0; i < 100 && (await api('GET', `/datasets/${id}/index`)).body.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 100));
    return id;
  };

  beforeAll(async () => {
    // What `sable keys create --role member` does, beside the running service.
    const store = new ControlStore(h.dir);
    memberKey = (await createKey(store, (await ensureOrg(store, 'default')).id, 'member')).key;
    await store.close();
  });

  it('signs in, creates a dataset, searches it with a filter, shows it, deletes one, signs out', async () => {
    const scratch = (await api('POST', '/datasets', { name: 'scratch', dim: 4, metric: 'l2' })).body;
    const page = await newPage();
    await page.goto(`${h.svc.url}/dashboard/`);
    await page.getByLabel('API key').waitFor();
    await shot(page, 'sign-in');
    await page.getByLabel('API key').fill('sable_' + '0'.repeat(64));
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Refused in the service's words.
    await page.getByRole('alert').getByText('missing or invalid API key').waitFor();
    await signIn(page, h.adminKey);
    expect(await page.getByText('admin key').count()).toBe(1);

    // Create a text dataset with a typed field, on the page.
    await page.getByRole('button', { name: 'New dataset' }).click();
    await page.getByLabel('Name', { exact: true }).fill('notes');
    await page.getByLabel('Hybrid search (vectors and keywords)').check();
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByLabel('Field 1 name').fill('year');
    await page.getByLabel('Field 1 type').selectOption('i64');
    await shot(page, 'datasets-create');
    await page.getByRole('button', { name: 'Create dataset' }).click();
    await page.getByRole('status').getByText('Created notes.').waitFor();
    const notes = (await api('GET', '/datasets')).body.datasets.find((d: { name: string }) => d.name === 'notes');
    expect(notes).toMatchObject({ hybrid: true, embedding: { provider: 'local' }, schema: [{ name: 'year', type: 'i64', source: 'user' }] });

    // Vectors through the API: the dataset's model embeds metadata.text.
    const inserted = await api('POST', `/datasets/${notes.id}/insert`, { vectors: NOTES });
    expect(inserted, JSON.stringify(inserted.body)).toMatchObject({ status: 200, body: { inserted: NOTES.length, embedded: NOTES.length } });
    await page.reload();
    const row = page.getByRole('row', { name: /^notes / });
    await row.getByRole('cell', { name: String(NOTES.length), exact: true }).waitFor();
    expect(await row.textContent()).toContain('local/all-minilm-l6-v2');
    await shot(page, 'datasets');

    // Search with a filter built from the typed field.
    await row.getByRole('link', { name: 'Search notes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Search' }).waitFor();
    await page.getByLabel('Query text').fill('how long to boil pasta for spaghetti?');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Filter 1 field').selectOption('year');
    await page.getByLabel('Filter 1 operator').selectOption('gte');
    await page.getByLabel('Filter 1 value').fill('2023');
    await page.getByLabel('Results (top_k)').fill('3');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const hits = page.locator('.hits > li');
    await hits.first().waitFor();
    expect(await hits.first().textContent()).toContain('Boil pasta in plenty of salted water');
    // The 2019 carbonara is nearer in meaning but filtered out.
    expect(await page.locator('.hits').textContent()).not.toContain('carbonara');
    const receipt = await page.getByRole('region', { name: 'Receipt' }).textContent();
    expect(receipt).toMatch(/Strategy\w+/);
    expect(receipt).toContain('Candidates scored');
    expect(receipt).toContain('Estimated recall@10');
    // Hybrid was on (the dataset's default): each hit shows what the vector and the keywords gave.
    expect(await hits.first().textContent()).toMatch(/vector 0\.\d{4} · keyword 0\.\d*[1-9]/);
    expect(await page.getByRole('alert').count()).toBe(0);
    await shot(page, 'search');

    // The dataset's page: schema (declared and inferred), storage, SLA.
    await page.getByRole('link', { name: 'notes', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'notes' }).waitFor();
    const schema = page.getByRole('region', { name: 'Schema fields' });
    await schema.getByRole('row', { name: /^year i64 user/ }).waitFor();
    expect(await schema.getByRole('row', { name: /^lang string inferred \d+\.\d %/ }).count()).toBe(1);
    const storage = await page.getByRole('region', { name: 'Storage and index' }).textContent();
    expect(storage).toContain(`Vectors${NOTES.length}`);
    expect(storage).toMatch(/Partitions\d+/);
    expect(storage).toMatch(/Memory[\d.]+ [KMG]?B/);
    expect(await page.getByRole('heading', { name: 'Declare fields (admin)' }).count()).toBe(1);
    expect(await page.getByRole('alert').count()).toBe(0);

    // An indexed dataset under an SLA: the tuner's nprobe and p99, read every two seconds while searches run.
    const products = await productsWithIndex();
    await page.goto(`${h.svc.url}/dashboard/#/datasets/${products}`);
    await page.getByRole('heading', { level: 1, name: 'products' }).waitFor();
    let searching = true;
    const searches = (async () => {
      for (let i = 0; searching; i++) await api('POST', `/datasets/${products}/search`, { query: vector(i), top_k: 10 });
    })();
    await page.getByRole('img', { name: /^SLA tuner: [3-9] readings; latest nprobe \d+, observed p99 [\d.]+ ms, target 1\.00 ms/ }).waitFor({ timeout: 15_000 });
    searching = false;
    await searches;
    expect(await page.getByRole('region', { name: 'Schema fields' }).getByRole('row', { name: /^price i64 inferred 100\.0 % 3,000/ }).count()).toBe(1);
    expect(await page.getByRole('region', { name: 'Storage and index' }).textContent()).toContain('sable, built');
    expect(await page.getByRole('alert').count()).toBe(0);
    await shot(page, 'dataset');

    // Delete with confirmation: Cancel keeps it, Delete removes it.
    await page.getByRole('link', { name: 'Datasets' }).click();
    await page.getByRole('button', { name: 'Delete scratch' }).click();
    await page.getByRole('dialog', { name: 'Delete scratch?' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByRole('dialog').count()).toBe(0);
    await page.getByRole('button', { name: 'Delete scratch' }).click();
    await page.getByRole('dialog', { name: 'Delete scratch?' }).waitFor();
    await shot(page, 'delete-dialog');
    await page.getByRole('button', { name: 'Delete dataset' }).click();
    await page.getByRole('status').getByText('Deleted scratch.').waitFor();
    await page.getByRole('row', { name: /^scratch / }).waitFor({ state: 'detached' });
    expect((await api('GET', `/datasets/${scratch.id}`)).status).toBe(404);

    // Neither the key nor the session token is in the page.
    const text = await page.content();
    expect(text).not.toContain(h.adminKey);
    expect(text).not.toContain(tokens.at(-1));

    // Signing out ends the session token at the service (DELETE /auth/sessions), then empties the tab.
    const token = tokens.at(-1)!;
    expect(await sessionRoute(token)).not.toBe(401);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await sessionRoute(token)).toBe(401);
    await page.reload();
    await page.getByLabel('API key').waitFor();
    await page.context().close();
  }, 60_000);

  it('hides the admin-only action from a member key', async () => {
    const page = await newPage();
    await signIn(page, memberKey);
    expect(await page.getByText('member key').count()).toBe(1);
    await page.getByRole('link', { name: 'notes', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'notes' }).waitFor();
    await page.getByRole('region', { name: 'Schema fields' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Declare fields (admin)' }).count()).toBe(0);
    await page.context().close();
  });

  it('at 390 px wide the nav folds behind Menu and still leads everywhere', async () => {
    const page = await newPage(390, 844);
    await signIn(page, h.adminKey);
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Search' }).isVisible()).toBe(false);
    await shot(page, 'mobile-datasets');
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await nav.getByRole('link', { name: 'Search' }).waitFor({ state: 'visible' });
    await shot(page, 'mobile-menu');
    await nav.getByRole('link', { name: 'Search' }).click();
    await page.getByRole('heading', { level: 1, name: 'Search' }).waitFor();
    await nav.waitFor({ state: 'hidden' });
    // Nothing wider than the screen but the tables' own scrolling regions.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.context().close();
  });

  it('loaded nothing from another origin and put no key or token in the console', () => {
    expectNothingLeaked(h, [memberKey]);
    // The role comes with the session (POST /auth/sessions): no request probes for it, and no
    // refusal but the one wrong key's 401 reaches the console.
    expect(requests.filter((u) => u.includes('/schema') && u.includes('00000000-0000'))).toEqual([]);
    expect(consoleLines.filter((l) => /status of 4\d\d/.test(l) && !l.includes('status of 401'))).toEqual([]);
  });

  it('serves the page and its assets with cache and security headers, gzip and ETags, on both adapters', async () => {
    const nodeDir = mkdtempSync(join(tmpdir(), 'sable-dashboard-node-'));
    const emptyDir = mkdtempSync(join(tmpdir(), 'sable-dashboard-unbuilt-'));
    const onNode = await startService(loadConfig({ port: '0', 'data-dir': nodeDir, 'http-adapter': 'node' }, {}));
    const unbuilt = await startService(loadConfig({ port: '0', 'data-dir': join(emptyDir, 'data'), 'http-adapter': 'node' }, {}), { dashboardDir: emptyDir });
    try {
      expect(onNode.adapter).toBe('node:http');
      for (const url of [h.svc.url, onNode.url]) {
        const index = await fetch(`${url}/dashboard/`, { headers: { 'accept-encoding': 'gzip' } });
        expect(index.status).toBe(200);
        expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(index.headers.get('cache-control')).toBe('no-cache');
        expect(index.headers.get('content-security-policy')).toMatch(/^default-src 'self'; script-src 'self';/);
        expect(index.headers.get('content-security-policy')).not.toContain('unsafe-inline');
        expect(index.headers.get('x-content-type-options')).toBe('nosniff');
        expect(index.headers.get('referrer-policy')).toBe('no-referrer');
        const html = await index.text();
        expect(html).not.toMatch(/<script>|<style>|https?:\/\//);
        const script = /<script type="module" src="\.\/(assets\/main-[A-Z0-9]+\.js)"><\/script>/.exec(html)![1];
        const css = /<link rel="stylesheet" href="\.\/(assets\/main-[A-Z0-9]+\.css)">/.exec(html)![1];

        // A hashed asset: immutable for a year, gzipped as built, revalidated by its ETag.
        const raw = await rawGet(url, `/dashboard/${script}`, 'Accept-Encoding: gzip, deflate');
        expect(raw.status).toBe(200);
        expect(raw.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(raw.headers['content-type']).toBe('text/javascript; charset=utf-8');
        expect(raw.headers['content-encoding']).toBe('gzip');
        expect(raw.headers.vary).toBe('Accept-Encoding');
        const plain = await rawGet(url, `/dashboard/${script}`, 'Accept-Encoding: identity');
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(gunzipSync(raw.body).equals(plain.body)).toBe(true);
        expect(raw.body.length).toBeLessThan(plain.body.length / 2);
        const again = await rawGet(url, `/dashboard/${script}`, `Accept-Encoding: gzip\r\nIf-None-Match: ${raw.headers.etag}`);
        expect(again.status).toBe(304);
        expect((await rawGet(url, `/dashboard/${css}`, 'Accept-Encoding: identity')).headers['content-type']).toBe('text/css; charset=utf-8');

        // Only the files the build wrote: unknown names and traversal, raw or encoded, are 404.
        for (const path of ['/dashboard/assets/nothing.js', '/dashboard/../package.json', '/dashboard/assets/../../package.json', '/dashboard/assets/%2e%2e/%2e%2e/package.json', '/dashboard/..%2f..%2fpackage.json', '/dashboard/index.html.gz']) {
          const answer = await rawGet(url, path);
          expect(answer.status, path).toBe(404);
          expect(answer.body.toString(), path).not.toContain('"name": "sable-retrieval"');
        }
        expect((await rawGet(url, '/dashboard/assets/nothing.js')).status).toBe(404);
        expect((await rawGet(url, '/')).headers.location).toBe('/dashboard/');
        expect((await rawGet(url, '/dashboard')).headers.location).toBe('/dashboard/');
        // No key needed, and no part of the API: the OpenAPI document does not list them.
        const doc = await (await fetch(`${url}/openapi.json`)).json();
        expect(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/dashboard'))).toEqual([]);
      }
      const missing = await fetch(`${unbuilt.url}/dashboard/`);
      expect(missing.status).toBe(503);
      expect(await missing.text()).toContain('npm run build:dashboard');
      expect((await fetch(`${unbuilt.url}/healthz`)).status).toBe(200);
    } finally {
      await onNode.close();
      await unbuilt.close();
      rmSync(nodeDir, { recursive: true, force: true });
      rmSync(emptyDir, { recursive: true, force: true });
    }
  });
});

/** One GET as written (fetch would resolve `..` before sending it), over a fresh connection. */
function rawGet(url: string, path: string, extraHeaders = ''): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = all.subarray(0, split).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: all.subarray(split + 4) });
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n${extraHeaders ? extraHeaders + '\r\n' : ''}\r\n`);
  });
}
