// What the dashboard's browser tests share: a service started in this process on a fresh data
// directory and headless Chromium (Debian's `chromium`, driven by playwright-core), started before
// a suite's tests and stopped after them; the API with the admin key; pages that record every
// request and console line (for the checks that nothing leaves the origin and no secret reaches
// the console); sign-in; screenshots into bench/.cache/dashboard-shots/.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = join(__dirname, '..', '..', 'bench', '.cache', 'dashboard-shots');

export interface Harness {
  /** Set once the suite's beforeAll has run. */
  svc: Service;
  dir: string;
  browser: Browser;
  adminKey: string;
  /** Every request any page made, every console line, every session token a sign-in opened. */
  requests: string[];
  consoleLines: string[];
  tokens: string[];
  /** One call with the admin key: the status and the parsed body (null for 204). */
  api: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
  newPage: (width?: number, height?: number) => Promise<Page>;
  shot: (page: Page, name: string) => Promise<Buffer>;
  /** Signs in with `key` and waits for the datasets page. */
  signIn: (page: Page, key: string) => Promise<void>;
}

export interface HarnessOptions {
  /** More of the service's settings (flags as `sable serve` takes them, and its environment), read as it starts. */
  config?: () => { flags?: Record<string, string>; env?: Record<string, string> };
}

/** Registers the suite's beforeAll (service, browser) and afterAll; the fields are set once it ran. */
export function dashboardHarness(prefix: string, options: HarnessOptions = {}): Harness {
  const h = { requests: [], consoleLines: [], tokens: [] } as unknown as Harness;
  h.api = async (method, path, body) => {
    const res = await fetch(h.svc.url + path, { method, headers: { 'x-api-key': h.adminKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: res.status === 204 ? null : await res.json() };
  };
  h.newPage = async (width = 1280, height = 900) => {
    const page = await (await h.browser.newContext({ viewport: { width, height } })).newPage();
    // CI runs these beside the rest of the suite on 2 cores: a page may take longer than
    // playwright's 30 s to show a step there, never a minute.
    page.setDefaultTimeout(60_000);
    page.on('request', (r) => h.requests.push(r.url()));
    page.on('console', (m) => h.consoleLines.push(m.text()));
    page.on('pageerror', (e) => h.consoleLines.push(`pageerror: ${e.message}`));
    return page;
  };
  h.shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  h.signIn = async (page, key) => {
    await page.goto(`${h.svc.url}/dashboard/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Datasets' }).waitFor();
    h.tokens.push(JSON.parse((await page.evaluate(() => sessionStorage.getItem('sable.dashboard.session')))!).token);
  };

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), 'Debian chromium is installed (.ci/run installs it)').toBe(true);
    mkdirSync(SHOTS, { recursive: true });
    h.dir = mkdtempSync(join(tmpdir(), prefix));
    const more = options.config?.() ?? {};
    h.svc = await startService(loadConfig({ port: '0', 'data-dir': h.dir, ...more.flags }, { ...more.env }));
    h.adminKey = h.svc.createdAdminKey!;
    h.browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await h.browser?.close();
    await h.svc?.close();
    if (h.dir) rmSync(h.dir, { recursive: true, force: true });
  });
  return h;
}

/** What every suite checks at its end: nothing loaded from another origin, no key or token in the console, no page error or CSP refusal. */
export function expectNothingLeaked(h: Harness, secrets: string[]): void {
  expect(h.requests.length).toBeGreaterThan(10);
  expect(h.requests.filter((u) => !u.startsWith(h.svc.url + '/') && !u.startsWith('data:') && !u.startsWith('blob:'))).toEqual([]);
  for (const secret of [h.adminKey, ...secrets, ...h.tokens]) expect(h.consoleLines.filter((l) => l.includes(secret))).toEqual([]);
  expect(h.consoleLines.filter((l) => l.startsWith('pageerror') || l.includes('Content Security Policy'))).toEqual([]);
}
