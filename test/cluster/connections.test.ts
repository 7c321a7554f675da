// OAuth connections in a cluster: a grant's refresh is single-flight across the nodes (the design's
// "OAuth token refresh is single-flight", ../shared/design/cluster.md §3.6). A rotated refresh
// token is good once: jira sources on one connection run on several nodes at once, each run
// refreshing first, against a local OAuth server whose token endpoint answers slowly (so the
// nodes' refreshes would overlap); no refresh token is spent twice, no two refreshes are in
// flight together, and every run completes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuth2Server } from 'oauth2-mock-server';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJira } from '../../testkit/peers/jira.js';
import { startCluster, until503Passes, type TestCluster } from '../support/cluster.js';
import { startOAuthMock } from '../support/oauth-mock.js';

const SOURCES = 6;

let oauth: OAuth2Server;
let slowToken: Server;
let jira: Awaited<ReturnType<typeof startJira>>;
let cluster: TestCluster;
let db: pg.Client;
const jiraTokens = new Set<string>();
const refreshesUsed: string[] = [];
let inFlight = 0;
let mostInFlight = 0;

beforeAll(async () => {
  oauth = await startOAuthMock('ada@acme.test');
  oauth.service.on('beforeResponse', (res: { body: Record<string, unknown> }, req: { body: Record<string, string> }) => {
    if (req.body.grant_type === 'refresh_token') refreshesUsed.push(req.body.refresh_token);
    if (typeof res.body.access_token === 'string') jiraTokens.add(res.body.access_token);
  });
  const issuer = oauth.issuer.url!;
  // The token endpoint, 400 ms slower: refreshes from several nodes at once would overlap here.
  slowToken = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', async () => {
      const refreshing = Buffer.concat(parts).toString().includes('grant_type=refresh_token');
      if (refreshing) mostInFlight = Math.max(mostInFlight, ++inFlight);
      await new Promise((r) => setTimeout(r, 400));
      const upstream = await fetch(`${issuer}/token`, { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body: Buffer.concat(parts) });
      if (refreshing) inFlight--;
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => slowToken.listen(0, '127.0.0.1', r));
  jira = await startJira({ cloudId: 'cloud-1', tokens: jiraTokens });
  jira.issues.push({ id: '1', key: 'OPS-1', summary: 'Backups', description: 'Backups run at two in the morning.', status: 'Done', updated: '2026-11-01T10:00:00.000+0000', comments: [] });
  cluster = await startCluster({
    nodes: 3,
    env: {
      SABLE_ATLASSIAN_API_URL: jira.url,
      SABLE_ATLASSIAN_CLIENT_ID: 'sable-atlassian',
      SABLE_ATLASSIAN_CLIENT_SECRET: 'atl-secret',
      SABLE_ATLASSIAN_AUTHORIZE_URL: `${issuer}/authorize`,
      SABLE_ATLASSIAN_TOKEN_URL: `http://127.0.0.1:${(slowToken.address() as AddressInfo).port}/token`,
      SABLE_ATLASSIAN_USERINFO_URL: `${issuer}/userinfo`,
      SABLE_ATLASSIAN_REVOKE_URL: `${issuer}/revoke`,
    },
  });
  db = new pg.Client({ connectionString: cluster.pg.url });
  await db.connect();
}, 120_000);

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  await oauth?.stop();
  slowToken?.close();
  await jira?.close();
});

describe('connections across the nodes', () => {
  it('a grant is refreshed by one node at a time: jira runs on several nodes at once spend each refresh token once, and all complete', async () => {
    const created = await cluster.call(0)('POST', '/connections', { provider: 'atlassian', source_type: 'jira' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const approve = await fetch(created.body.authorization_url, { redirect: 'manual' });
    const back = await fetch(approve.headers.get('location')!);
    expect(back.status).toBe(200);
    const connectionId = created.body.id;
    const ds = (await cluster.call(1)('POST', '/datasets', { name: 'ops' })).body.id;
    const sources: string[] = [];
    for (let i = 0; i < SOURCES; i++) {
      const s = await until503Passes(() =>
        cluster.call(i % 3)('POST', '/ingestion/sources', { source_type: 'jira', name: `ops-${i}`, config: { cloud_id: 'cloud-1', connection_id: connectionId, project_keys: ['OPS'] } }),
      );
      expect(s.status, JSON.stringify(s.body)).toBe(201);
      sources.push(s.body.id);
    }
    // Rounds of every source's job at once, until the runs were spread over two nodes or more.
    const runners = new Set<string>();
    for (let round = 0; round < 3 && runners.size < 2; round++) {
      const jobs: string[] = [];
      for (const [i, src] of sources.entries()) {
        const j = await until503Passes(() => cluster.call(i % 3)('POST', '/ingestion/jobs', { source_id: src, dataset_id: ds }));
        expect(j.status, JSON.stringify(j.body)).toBeLessThan(300);
        jobs.push(j.body.job_id);
      }
      const end = Date.now() + 60_000;
      for (;;) {
        const { rows } = await db.query(`SELECT status, lease_owner FROM job_records WHERE job_id = ANY($1)`, [jobs]);
        for (const r of rows) if (r.lease_owner) runners.add(String(r.lease_owner).split('/')[0]);
        if (rows.length === jobs.length && rows.every((r) => r.status !== 'pending' && r.status !== 'running')) {
          expect(rows.map((r) => r.status)).toEqual(jobs.map(() => 'completed'));
          break;
        }
        if (Date.now() > end) throw new Error(`jobs not ended in 60 s: ${JSON.stringify(rows)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    expect(runners.size, `the runs were on ${[...runners].join(', ')}`).toBeGreaterThanOrEqual(2);
    // Runs that start while a refresh is in flight (here or on another node) take its token.
    expect(refreshesUsed.length).toBeGreaterThanOrEqual(1);
    expect(new Set(refreshesUsed).size, `refresh tokens spent: ${refreshesUsed.join(' ')}`).toBe(refreshesUsed.length);
    expect(mostInFlight).toBe(1);
    const c = await cluster.call(2)('GET', `/connections/${connectionId}`);
    expect(c.body).toMatchObject({ status: 'connected', error: null });
  }, 240_000);
});
