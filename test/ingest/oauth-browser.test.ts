// The OAuth consent flow end to end in a real browser: headless Chromium (Debian's `chromium`,
// installed by .ci/run; driven by playwright-core) opens the authorization_url of a new
// connection on a local OpenID provider with real login and consent pages (oidc-provider), signs
// in, approves, and lands on the service's callback page; the connection is then `connected` with
// the account's email (PKCE required by the provider, the secret sent client_secret_post).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { googleFlagsFor, OIDC_CLIENT_SECRET, serveOidcProvider } from '../support/oidc-provider.js';

const CHROMIUM = '/usr/bin/chromium';

describe('OAuth consent in a real browser', () => {
  let dir: string;
  let svc: Service;
  let issuerServer: Server;
  let issuer: string;
  let browser: Browser;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), 'Debian chromium is installed (.ci/run installs it)').toBe(true);
    // The provider's address is needed by the service's settings, the service's by the provider's client.
    issuerServer = createServer();
    await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', r));
    issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'sable-oauth-browser-'));
    svc = await startService(
      loadConfig(
        { port: '0', 'data-dir': dir, ...googleFlagsFor(issuer) },
        { SABLE_GOOGLE_CLIENT_SECRET: OIDC_CLIENT_SECRET },
      ),
    );
    serveOidcProvider(issuerServer, issuer, svc.url);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    await new Promise<void>((r) => issuerServer.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs in, approves, and the connection is connected with the account email', async () => {
    const key = svc.createdAdminKey!;
    const created = await (await fetch(`${svc.url}/connections`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ provider: 'google', source_type: 'gdrive' }) })).json();
    expect(created.status).toBe('pending');
    const page = await browser.newPage();
    await page.goto(created.authorization_url);
    await page.fill('input[name=login]', 'ada');
    await page.fill('input[name=password]', 'any password');
    await page.click('button[type=submit]');
    await page.waitForSelector('button[autofocus]');
    await page.click('button[autofocus]');
    await page.waitForURL((u) => u.href.startsWith(`${svc.url}/connections/callback`));
    expect(await page.textContent('body')).toContain('Connected as ada@acme.test');
    const got = await (await fetch(`${svc.url}/connections/${created.id}`, { headers: { 'x-api-key': key } })).json();
    expect(got).toMatchObject({ status: 'connected', account_email: 'ada@acme.test', error: null });
  }, 60_000);
});
