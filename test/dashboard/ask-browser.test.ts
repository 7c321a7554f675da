// The dashboard's Ask and Connections pages in a real browser (issue 31, phase 2): headless
// Chromium against a service started in this process (test/dashboard/support.ts), without a
// model, so answers are extractive, with citations. Ask: a question over a chosen dataset streams
// its trace and answer; a [n] citation opens its source's passages (preview_ref); after a reload
// the session is in the list and opens again with its messages and traces (a stored answer's
// passages too); a follow-up in it whose stream drops mid-way (the first response cut after three
// chunks) is taken up with Last-Event-ID and ends with one answer, as the service has it, and so
// does one whose request reached the service but whose answer never came back. Connections: a
// Google connection against a local OpenID provider with real login and consent pages
// (oidc-provider): the consent link opens a new tab, the page then shows it connected with the
// account, revoking asks first and revokes the grant at the provider. Signing out ends the
// session token: the service refuses it after. Screenshots go to bench/.cache/dashboard-shots/.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { googleFlagsFor, OIDC_CLIENT_SECRET, serveOidcProvider } from '../support/oidc-provider.js';
import { dashboardHarness, expectNothingLeaked } from './support.js';

const DOCS = [
  { id: 'lighthouse-1', metadata: { name: 'lighthouse.md', text: 'The lighthouse keeper climbs 217 steps every evening to light the lamp. The lamp burns paraffin oil and turns twice a minute.' } },
  { id: 'lighthouse-2', metadata: { name: 'lighthouse.md', text: 'In winter the keeper paints the iron railings of the gallery white against the salt.' } },
  { id: 'volcano-1', metadata: { name: 'volcano.txt', text: 'Magma that reaches the surface is called lava. A volcano that has not erupted for ten thousand years is called extinct.' } },
  { id: 'bread-1', metadata: { name: 'bread.md', text: 'Sourdough bread rises slowly: the starter needs twelve hours at room temperature before the dough is shaped.' } },
];

describe('the Ask and Connections pages in Chromium', () => {
  // The OpenID provider's address is in the service's settings, the service's in the provider's client.
  let issuerServer: Server;
  let issuer = '';
  const issuerPaths: string[] = [];
  beforeAll(async () => {
    issuerServer = createServer();
    issuerServer.on('request', (req) => issuerPaths.push(req.url ?? ''));
    await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', r));
    issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
  });
  const h = dashboardHarness('sable-dashboard-ask-', {
    config: () => ({
      flags: googleFlagsFor(issuer),
      env: { SABLE_GOOGLE_CLIENT_SECRET: OIDC_CLIENT_SECRET },
    }),
  });
  let handbook: string;

  beforeAll(async () => {
    serveOidcProvider(issuerServer, issuer, h.svc.url);

    // A text dataset (the local embedding model embeds metadata.text) with a few documents' chunks.
    const created = await h.api('POST', '/datasets', { name: 'handbook' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    handbook = created.body.id;
    await h.api('POST', `/datasets/${handbook}/ensure-engine`);
    const inserted = await h.api('POST', `/datasets/${handbook}/insert`, { vectors: DOCS });
    expect(inserted, JSON.stringify(inserted.body)).toMatchObject({ status: 200, body: { inserted: DOCS.length } });
    // Another dataset, not chosen: its passage must not be cited.
    const other = (await h.api('POST', '/datasets', { name: 'other-lighthouses' })).body.id;
    await h.api('POST', `/datasets/${other}/ensure-engine`);
    await h.api('POST', `/datasets/${other}/insert`, { vectors: [{ id: 'x', metadata: { name: 'elsewhere.md', text: 'The lighthouse keeper of the other coast climbs 999 steps.' } }] });
  }, 60_000);
  afterAll(async () => {
    await new Promise<void>((r) => issuerServer.close(() => r()));
  });

  const answerOf = (page: Page, i: number) => page.locator('.exchange').nth(i);

  it('asks over a chosen dataset, streams the answer, opens a citation; the session reopens; a dropped stream resumes', async () => {
    const page = await h.newPage();
    await h.signIn(page, h.adminKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Ask' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ask' }).waitFor();
    await page.getByText('No sessions yet').waitFor();

    // A question over the chosen dataset: the trace and the answer stream in, then the sources.
    await page.getByLabel('handbook').check();
    await page.getByLabel('Question', { exact: true }).fill('How many steps does the lighthouse keeper climb?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    const first = answerOf(page, 0);
    await first.locator('.answer').getByText('217 steps', { exact: false }).waitFor();
    await first.getByRole('region', { name: 'Sources' }).waitFor();
    await page.getByRole('button', { name: 'Ask', exact: true }).waitFor();
    const sessionId = /#\/ask\/([0-9a-f-]{36})$/.exec(page.url())![1];
    const answerText = (await first.locator('.answer').textContent())!;
    expect(answerText).toContain('The lighthouse keeper climbs 217 steps every evening to light the lamp. [1]');
    expect(answerText).not.toContain('999');
    expect(await first.getByRole('region', { name: 'Sources' }).textContent()).not.toContain('elsewhere.md');
    // The trace folds once the answer is done.
    expect(await first.locator('details.trace').getAttribute('open')).toBeNull();
    const phases = await first.locator('.trace .phase').allTextContents();
    expect([...new Set(phases)]).toEqual(['received', 'resolve', 'plan', 'route', 'act', 'synthesize', 'done']);

    // [1] opens its source's passages, read through its preview_ref.
    const citation = first.getByRole('button', { name: 'Citation 1: lighthouse.md' }).first();
    await citation.click();
    const passages = first.getByRole('list', { name: 'Passages of lighthouse.md' });
    await passages.getByText('The lamp burns paraffin oil', { exact: false }).waitFor();
    expect(await passages.getByRole('listitem').count()).toBeGreaterThanOrEqual(1);
    expect(await page.getByRole('alert').count()).toBe(0);
    await h.shot(page, 'ask');

    // After a reload the session is listed (titled by its question) and opens with its messages.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Ask' }).waitFor();
    await page.getByRole('link', { name: 'New chat' }).click();
    await page.getByRole('heading', { level: 2, name: 'New chat' }).waitFor();
    const listed = page.getByRole('navigation', { name: 'Sessions' }).getByRole('link', { name: 'How many steps does the lighthouse keeper climb?' });
    await listed.click();
    await page.getByRole('heading', { level: 2, name: 'How many steps does the lighthouse keeper climb?' }).waitFor();
    expect(page.url()).toContain(`#/ask/${sessionId}`);
    const stored = answerOf(page, 0);
    await stored.locator('.answer').getByText('217 steps', { exact: false }).waitFor();
    expect(await stored.locator('.question').textContent()).toBe('How many steps does the lighthouse keeper climb?');
    expect(await page.getByLabel('handbook').isChecked()).toBe(true);
    // With its run's trace, from the session's events.
    expect(await stored.locator('.trace li', { hasText: 'Question received' }).count()).toBe(1);
    // The session keeps the sources' names; their passages come from the run, kept 15 minutes.
    await stored.getByRole('button', { name: 'Citation 1: lighthouse.md' }).first().click();
    await stored.getByRole('list', { name: 'Passages of lighthouse.md' }).getByText('217 steps', { exact: false }).waitFor();

    // A follow-up in the session whose stream drops after three chunks: the page sends the
    // question again with its run_id and Last-Event-ID 3, and ends with one answer.
    const queries: { runId: string; lastEventId: string | undefined }[] = [];
    let sent = 0;
    // The resumed request waits until the page was seen showing what came before the drop.
    let seen!: () => void;
    const shown = new Promise<void>((r) => (seen = r));
    await page.route('**/intelligence/query', async (route) => {
      queries.push({ runId: JSON.parse(route.request().postData()!).run_id, lastEventId: route.request().headers()['last-event-id'] });
      if (queries.length > 1) return shown.then(() => route.continue());
      const whole = await route.fetch();
      const frames = (await whole.text()).split('\n\n').filter((f) => f.startsWith('id:'));
      sent = frames.length;
      await route.fulfill({ status: 200, headers: { 'content-type': whole.headers()['content-type']!, 'cache-control': 'no-cache' }, body: frames.slice(0, 3).join('\n\n') + '\n\n' });
    });
    await page.getByLabel('Follow-up question').fill('What oil does the lamp burn?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    const followUp = answerOf(page, 1);
    // The chunks that came are on the page as they came: three trace steps, no text yet.
    await followUp.getByText('The stream dropped after chunk 3: resuming…').waitFor();
    expect(await followUp.getByRole('list', { name: 'Trace' }).getByRole('listitem').allTextContents()).toEqual([
      expect.stringContaining('Question received'),
      expect.any(String),
      expect.any(String),
    ]);
    expect(await followUp.locator('.answer').textContent()).toBe('Working on it…');
    await h.shot(page, 'ask-resuming');
    seen();
    await followUp.getByText('The stream dropped once and resumed after chunk 3.').waitFor();
    await followUp.getByRole('region', { name: 'Sources' }).waitFor();
    await page.unroute('**/intelligence/query');
    expect(sent).toBeGreaterThan(6);
    const runId = queries[0]!.runId;
    expect(queries).toEqual([
      { runId, lastEventId: undefined },
      { runId, lastEventId: '3' },
    ]);
    const run = (await h.api('GET', `/intelligence/runs/${runId}`)).body;
    expect(run).toMatchObject({ status: 'succeeded' });
    expect(run.answer).toContain('paraffin oil');
    expect(await followUp.locator('.answer').textContent()).toBe(run.answer);
    expect(await page.locator('.exchange').count()).toBe(2);
    // Every trace event once: none lost in the drop, none replayed twice.
    expect(await followUp.locator('.trace li').allTextContents()).toHaveLength(run.events.length);
    expect(await followUp.locator('.trace li', { hasText: 'Question received' }).count()).toBe(1);
    await followUp.getByRole('button', { name: 'Citation 1: lighthouse.md' }).first().click();
    await followUp.getByRole('list', { name: 'Passages of lighthouse.md' }).waitFor();

    // A question whose request reached the service but whose answer never came back (the
    // connection reset): sent again with its run_id, it attaches to the run the service has.
    let reset = false;
    await page.route('**/intelligence/query', async (route) => {
      if (reset) return route.continue();
      reset = true;
      await route.fetch();
      await route.abort('connectionreset');
    });
    await page.getByLabel('Follow-up question').fill('What is magma called once it reaches the surface?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    const third = answerOf(page, 2);
    await third.getByText('The stream dropped once and resumed after chunk 0.').waitFor();
    await third.getByRole('region', { name: 'Sources' }).waitFor();
    await page.unroute('**/intelligence/query');
    expect(await third.locator('.answer').textContent()).toContain('is called lava. [1]');
    // The session holds each exchange once: the run was asked once.
    const messages = (await h.api('GET', `/intelligence/sessions/${sessionId}/messages`)).body.messages;
    expect(messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(messages[3].content).toBe(run.answer);
    expect(messages[5].content).toBe(await third.locator('.answer').textContent());
    expect(await page.getByRole('alert').count()).toBe(0);
    await h.shot(page, 'ask-follow-up');
    await page.context().close();
  }, 60_000);

  it('creates a connection, follows its consent link, sees it connected, revokes it; signing out ends the session', async () => {
    const page = await h.newPage();
    await h.signIn(page, h.adminKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
    await page.getByText('No connections yet.').waitFor();

    // A provider the service has no OAuth client for: refused in the service's words.
    await page.getByLabel('Provider').selectOption('atlassian');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('alert').getByText('set SABLE_ATLASSIAN_CLIENT_ID and SABLE_ATLASSIAN_CLIENT_SECRET', { exact: false }).waitFor();

    await page.getByLabel('Provider').selectOption('google');
    await page.getByLabel('Source type').selectOption('gdrive');
    await page.getByRole('button', { name: 'Create connection' }).click();
    const consent = page.getByRole('link', { name: "Open Google's consent page" });
    await consent.waitFor();
    expect(await consent.getAttribute('target')).toBe('_blank');
    expect(await consent.getAttribute('rel')).toContain('noopener');
    await page.getByRole('row', { name: /^Google gdrive pending/ }).waitFor();
    await h.shot(page, 'connections-pending');

    // The consent, in the new tab: the provider's login and approval, then the service's callback.
    const [tab] = await Promise.all([page.context().waitForEvent('page'), consent.click()]);
    await tab.fill('input[name=login]', 'ada');
    await tab.fill('input[name=password]', 'any password');
    await tab.click('button[type=submit]');
    await tab.waitForSelector('button[autofocus]');
    await tab.click('button[autofocus]');
    await tab.waitForURL((u) => u.href.startsWith(`${h.svc.url}/connections/callback`));
    expect(await tab.textContent('body')).toContain('Connected as ada@acme.test');
    await tab.close();

    // The page reads the pending connection again until it is connected.
    const row = page.getByRole('row', { name: /^Google gdrive connected ada@acme\.test/ });
    await row.waitFor({ timeout: 10_000 });
    await page.getByRole('region', { name: 'Consent' }).getByText('Connected as ada@acme.test').waitFor();
    const [connection] = (await h.api('GET', '/connections')).body.connections;
    expect(connection).toMatchObject({ status: 'connected', account_email: 'ada@acme.test', source_type: 'gdrive', error: null });
    expect(await page.content()).not.toMatch(/access_token|refresh_token/);
    await h.shot(page, 'connections');

    // Revoke, after the confirmation (Cancel keeps it).
    await row.getByRole('button', { name: 'Revoke Google connection of ada@acme.test' }).click();
    await page.getByRole('dialog', { name: 'Revoke the Google connection?' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByRole('dialog').count()).toBe(0);
    await row.getByRole('button', { name: 'Revoke Google connection of ada@acme.test' }).click();
    await page.getByRole('dialog', { name: 'Revoke the Google connection?' }).waitFor();
    await h.shot(page, 'connections-revoke');
    await page.getByRole('button', { name: 'Revoke connection' }).click();
    await page.getByRole('status').getByText('Revoked the Google connection of ada@acme.test', { exact: false }).waitFor();
    await row.waitFor({ state: 'detached' });
    await page.getByText('No connections yet.').waitFor();
    expect((await h.api('GET', `/connections/${connection.id}`)).status).toBe(404);
    expect(issuerPaths.filter((p) => p.startsWith('/token/revocation'))).toHaveLength(1);

    // Signing out ends the session token at the service: refused from then on.
    const token = h.tokens.at(-1)!;
    const sessionRoute = async () => (await fetch(`${h.svc.url}/sources/info?source_path=x`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await sessionRoute()).not.toBe(401);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await sessionRoute()).toBe(401);
    await page.context().close();
  }, 60_000);

  it('at 390 px wide the Ask page stacks the sessions above the chat', async () => {
    const page = await h.newPage(390, 844);
    await h.signIn(page, h.adminKey);
    await page.goto(`${h.svc.url}/dashboard/#/ask`);
    await page.getByRole('navigation', { name: 'Sessions' }).getByRole('link').nth(1).click();
    await answerOf(page, 1).locator('.answer').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await h.shot(page, 'mobile-ask');
    await page.context().close();
  });

  it('loaded nothing from another origin and put no key or token in the console', () => {
    expectNothingLeaked(h, []);
  });
});
