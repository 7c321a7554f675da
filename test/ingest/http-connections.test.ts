// Connections over real HTTP against a local OAuth server (oauth2-mock-server: authorization code
// with PKCE, refresh and revocation endpoints): the consent URL (PKCE S256, state, scopes by
// source type), the callback that fills account_email, tokens never shown, a jira source run on a
// connection (refreshed before the run, the rotated refresh token stored and used next), a refresh
// the provider refuses (connection error, the run fails with the reason), denied consent, delete
// (revoked at the provider), another organization's connection.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OAuth2Server } from 'oauth2-mock-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { startJira } from '../../testkit/peers/jira.js';
import { ingestClient } from '../support/ingest.js';
import { startOAuthMock } from '../support/oauth-mock.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');

describe('connections (OAuth)', () => {
  let dir: string;
  let svc: Service;
  let oauth: OAuth2Server;
  let jira: Awaited<ReturnType<typeof startJira>>;
  const jiraTokens = new Set<string>();
  const refreshesUsed: string[] = [];
  const refreshesIssued: string[] = [];
  const revoked: string[] = [];
  let refuseRefresh = false;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);

  beforeAll(async () => {
    oauth = await startOAuthMock('ada@acme.test');
    oauth.service.on('beforeResponse', (res: { body: Record<string, unknown>; statusCode: number }, req: { body: Record<string, string> }) => {
      if (req.body.grant_type === 'refresh_token') {
        refreshesUsed.push(req.body.refresh_token);
        if (refuseRefresh) {
          res.statusCode = 400;
          res.body = { error: 'invalid_grant', error_description: 'Token has been revoked' };
          return;
        }
      }
      if (typeof res.body.access_token === 'string') jiraTokens.add(res.body.access_token);
      if (typeof res.body.refresh_token === 'string') refreshesIssued.push(res.body.refresh_token);
    });
    oauth.service.on('beforeRevoke', (_res: unknown, req: { body?: Record<string, string> }) => {
      revoked.push(req.body?.token ?? 'unknown');
    });
    jira = await startJira({ cloudId: 'cloud-1', tokens: jiraTokens });
    jira.issues.push({ id: '1', key: 'OPS-1', summary: 'Backups', description: 'Backups run at two in the morning.', status: 'Done', updated: '2026-11-01T10:00:00.000+0000', comments: [] });
    const issuer = oauth.issuer.url!;
    dir = mkdtempSync(join(tmpdir(), 'sable-connections-'));
    const endpoints = (p: string) => ({ [`${p}-client-id`]: `sable-${p}`, [`${p}-authorize-url`]: `${issuer}/authorize`, [`${p}-token-url`]: `${issuer}/token`, [`${p}-userinfo-url`]: `${issuer}/userinfo`, [`${p}-revoke-url`]: `${issuer}/revoke` });
    svc = await startService(
      loadConfig({ port: '0', 'data-dir': dir, 'atlassian-api-url': jira.url, ...endpoints('atlassian'), ...endpoints('google') }, { SABLE_ATLASSIAN_CLIENT_SECRET: 'atl-secret', SABLE_GOOGLE_CLIENT_SECRET: 'goo-secret' }),
    );
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await oauth.stop();
    await jira.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Plays the browser: the consent page approves at once and redirects to the callback. */
  const consent = async (authorizationUrl: string) => {
    const approve = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(approve.status).toBe(302);
    const back = await fetch(approve.headers.get('location')!);
    return { status: back.status, page: await back.text() };
  };

  let connectionId: string;

  it('refuses providers other than google and atlassian, and a source type the provider does not serve', async () => {
    expect((await api.call('POST', '/connections', { provider: 'dropbox' })).body).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('google or atlassian') });
    expect((await api.call('POST', '/connections', { provider: 'google', source_type: 'jira' })).status).toBe(400);
    expect((await api.call('GET', '/connections?provider=dropbox')).status).toBe(400);
  });

  it('connects through consent: PKCE and state in the URL, account_email filled, tokens never shown', async () => {
    const created = await api.call('POST', '/connections', { provider: 'atlassian', source_type: 'jira' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ provider: 'atlassian', status: 'pending', account_email: null });
    connectionId = created.body.id;
    const url = new URL(created.body.authorization_url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')!.length).toBeGreaterThan(20);
    expect(url.searchParams.get('redirect_uri')).toBe(`${svc.url}/connections/callback`);
    expect(url.searchParams.get('scope')).toContain('read:jira-work');
    expect(url.searchParams.get('scope')).toContain('offline_access');
    const back = await consent(created.body.authorization_url);
    expect(back.status).toBe(200);
    expect(back.page).toContain('Connected as ada@acme.test');
    const got = await api.call('GET', `/connections/${connectionId}`);
    expect(got.body).toMatchObject({ status: 'connected', account_email: 'ada@acme.test', error: null });
    const listed = await api.call('GET', '/connections?provider=atlassian');
    expect(listed.body.connections.map((c: { id: string }) => c.id)).toEqual([connectionId]);
    for (const t of [...jiraTokens, ...refreshesIssued]) expect(JSON.stringify([got.body, listed.body])).not.toContain(t);
    // The same callback link cannot be used twice.
    expect((await fetch(`${svc.url}/connections/callback?state=${url.searchParams.get('state')}&code=x`)).status).toBe(400);
  });

  it('a jira source runs on the connection: refreshed before each run, the rotated refresh token used next', async () => {
    const ds = await api.dataset('ops');
    const src = (await api.call('POST', '/ingestion/sources', { source_type: 'jira', name: 'ops', config: { cloud_id: 'cloud-1', connection_id: connectionId, project_keys: ['OPS'] } })).body.id;
    const first = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: src, dataset_id: ds })).body.job_id);
    expect(first.status, JSON.stringify(first)).toBe('completed');
    expect((await api.search(ds, 'when do backups run?'))[0].doc_value).toContain('two in the morning');
    const second = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: src, dataset_id: ds })).body.job_id);
    expect(second.status).toBe('completed');
    // Issued: at consent, then by each refresh. Each refresh used the one issued just before it (rotation stored).
    expect(refreshesUsed).toEqual(refreshesIssued.slice(0, 2));
    expect(refreshesIssued.length).toBe(3);

    refuseRefresh = true;
    const third = await api.job((await api.call('POST', '/ingestion/jobs', { source_id: src, dataset_id: ds })).body.job_id);
    expect(third.status).toBe('failed');
    expect(third.error_details.message).toContain('invalid_grant');
    const broken = (await api.call('GET', `/connections/${connectionId}`)).body;
    expect(broken.status).toBe('error');
    expect(broken.error).toContain('Token has been revoked');
    refuseRefresh = false;
  });

  it('denied consent leaves the connection in error with the reason', async () => {
    const created = await api.call('POST', '/connections', { provider: 'google', source_type: 'gdrive' });
    expect(new URL(created.body.authorization_url).searchParams.get('access_type')).toBe('offline');
    const state = new URL(created.body.authorization_url).searchParams.get('state');
    const page = await fetch(`${svc.url}/connections/callback?state=${state}&error=access_denied&error_description=The+user+said+no`);
    expect(page.status).toBe(400);
    expect((await api.call('GET', `/connections/${created.body.id}`)).body).toMatchObject({ status: 'error', error: 'the provider answered access_denied: The user said no' });
  });

  it("delete revokes at the provider; another organization's connection is not found", async () => {
    const other = JSON.parse(execFileSync(process.execPath, [CLI, 'keys', 'create', '--org', 'acme', '--data-dir', dir]).toString()).key;
    expect((await api.call('GET', `/connections/${connectionId}`, undefined, other)).body.error).toBe('connection_not_found');
    expect((await api.call('DELETE', `/connections/${connectionId}`, undefined, other)).status).toBe(404);
    const created = await api.call('POST', '/connections', { provider: 'atlassian' });
    await consent(created.body.authorization_url);
    expect((await api.call('DELETE', `/connections/${created.body.id}`)).status).toBe(204);
    expect(revoked.length).toBe(1);
    expect((await api.call('GET', `/connections/${created.body.id}`)).status).toBe(404);
  });
});
