// A page on another origin drives the API in a real browser (issue 28): headless Chromium
// (Debian's `chromium`, driven by playwright-core) loads a page from a second local server and,
// with the service's SABLE_CORS_ORIGINS naming that origin, creates a dataset, uploads a file to
// a file_upload source (the upload URL's PUT included), waits for the job, asks a question over
// a streamed fetch, and follows the run with an EventSource authenticated by a stream token (no
// key in the URL), which stops once the run is done (204). A page of an origin not named is
// refused by the browser itself.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';

const CHROMIUM = '/usr/bin/chromium';

describe('CORS from a page on another origin, in Chromium', () => {
  let dir: string;
  let svc: Service;
  let site: Server;
  let origin: string;
  let browser: Browser;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), 'Debian chromium is installed (.ci/run installs it)').toBe(true);
    site = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>integrator</title><p>app</p>'));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'sable-cors-browser-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'cors-origins': origin }, {}));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    site?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates, uploads, asks and follows the run from the page; another origin is refused', async () => {
    const page = await browser.newPage();
    await page.goto(origin);
    const out = await page.evaluate(
      async ({ api, key }) => {
        const headers = { 'x-api-key': key, 'content-type': 'application/json' };
        const call = async (method: string, path: string, body?: unknown) => {
          const res = await fetch(api + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
          return { status: res.status, requestId: res.headers.get('x-request-id'), body: res.status === 204 ? null : await res.json() };
        };
        const ds = await call('POST', '/datasets', { name: 'from-the-page' });
        await call('POST', `/datasets/${ds.body.id}/ensure-engine`, {});
        const src = await call('POST', '/ingestion/sources', { source_type: 'file_upload', name: 'page', config: {} });
        const text = 'The lighthouse keeper climbs 217 steps every evening to light the lamp.';
        const init = await call('POST', `/ingestion/sources/${src.body.id}/upload/init`, { dataset_id: ds.body.id, files: [{ name: 'keeper.txt', size_bytes: text.length, content_type: 'text/plain' }] });
        const put = await fetch(init.body.uploads[0].upload_url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: text });
        await call('POST', `/ingestion/sources/${src.body.id}/upload/complete`, { job_id: init.body.job_id, file_ids: [init.body.uploads[0].file_id] });
        let job;
        for (let i = 0; i < 300; i++) {
          job = await call('GET', `/ingestion/jobs/${init.body.job_id}`);
          if (job.body.status === 'completed' || job.body.status === 'failed') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        // The question as a streamed fetch: frames read as they come.
        const res = await fetch(api + '/intelligence/query', { method: 'POST', headers, body: JSON.stringify({ query: 'How many steps does the keeper climb?', dataset_ids: [ds.body.id], run_id: 'page-run' }) });
        const reader = res.body!.getReader();
        let streamed = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          streamed += new TextDecoder().decode(value);
        }
        const kinds = [...streamed.matchAll(/"chunk_type":"(\w+)"/g)].map((m) => m[1]);
        const answer = [...streamed.matchAll(/"chunk_type":"text","content":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`)).join('');
        // The run followed by an EventSource: a stream token in the URL, never the key.
        const token = await call('POST', '/intelligence/runs/page-run/stream-token', {});
        const followed = await new Promise<{ ids: string[]; closed: boolean }>((resolve) => {
          const ids: string[] = [];
          const es = new EventSource(api + token.body.events_path);
          es.onmessage = (e) => ids.push(e.lastEventId);
          // After `done` the server closes the stream; the reconnection gets 204 and the EventSource stops for good.
          es.onerror = () => setTimeout(() => resolve({ ids, closed: es.readyState === EventSource.CLOSED }), 4000);
        });
        return { ds: ds.status, requestId: ds.requestId, put: put.status, job: job!.body.status, kinds, answer, token: token.status, tokenHasKey: token.body.events_path.includes(key), followed };
      },
      { api: svc.url, key: svc.createdAdminKey! },
    );
    expect(out.ds).toBe(201);
    expect(out.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.put).toBe(200);
    expect(out.job).toBe('completed');
    expect(out.kinds[0]).toBe('event');
    expect(out.kinds.at(-1)).toBe('done');
    expect(out.answer).toContain('217 steps');
    expect(out.token).toBe(201);
    expect(out.tokenHasKey).toBe(false);
    expect(out.followed.ids.length).toBe(out.kinds.length);
    expect(out.followed.closed).toBe(true);

    // The same page from an origin the setting does not name: the browser refuses the answer.
    const other = await browser.newPage();
    await other.goto(origin.replace('127.0.0.1', 'localhost'));
    const refused = await other.evaluate(async ({ api, key }) => {
      try {
        await fetch(api + '/datasets', { headers: { 'x-api-key': key } });
        return 'answered';
      } catch (e) {
        return (e as Error).name;
      }
    }, { api: svc.url, key: svc.createdAdminKey! });
    expect(refused).toBe('TypeError');
  }, 120_000);
});
