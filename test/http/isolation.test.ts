// Isolation between organizations and the secrecy of credentials, over the real service (a child
// `sable serve` whose every output byte is kept) and real local peers (an OAuth server, a Jira
// server, and a leaky upstream that echoes back whatever credentials it is sent):
//  - checks generated from the route table (GET /openapi.json): every route with path parameters,
//    called with organization A's keys and organization B's ids (valid bodies, so that only the
//    owner is wrong), answers the resource's *_not_found and nothing of B; ids in bodies likewise;
//    lists never show B's ids; every admin route refuses member keys (403 insufficient_role) and
//    changes nothing; a route the generator cannot classify fails the test, so new routes are
//    covered or noticed. Everything B owns reads the same, by B, before and after.
//  - secrets (API keys, session tokens, organization secrets, source credentials, OAuth tokens and
//    codes, the OAuth client secret, the master key, the model key) appear in no answer, no line
//    the service writes and no error message, also when an upstream echoes them back; at rest,
//    API keys are sha256 hashes and every other secret is encrypted.
//  - comparisons of secrets are constant-time: MACs through timingSafeEqual, API keys and OAuth
//    states found by their hash.
import { createHash, generateKeyPairSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OAuth2Server } from 'oauth2-mock-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parquetBytes } from '../../dist/testkit/parquet-writer.js';
import { PreviewSigner } from '../../dist/answer/preview-ref.js';
import { SessionTokens } from '../../dist/control-plane/auth/sessions.js';
import { createKey, ensureOrg, hashKey, lookupKey } from '../../dist/control-plane/auth/keys.js';
import { ControlStore } from '../../dist/catalog/store.js';
import { ConnectionStore } from '../../dist/ingest/connections/store.js';
import { UploadSigner } from '../../dist/objects/signer.js';
import { startJira } from '../../testkit/peers/jira.js';
import { startLeakyPeer } from '../support/leaky-peer.js';
import { recorder, serveRecorded, type Answer, type RecordedService } from '../support/recorded.js';
import { startOAuthMock } from '../support/oauth-mock.js';

// Every MAC check must go through timingSafeEqual: the spy counts the calls (in this process only).
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

// ---------------------------------------------------------------- secrets of this run

/** Every secret of the run, by value, with what it is. */
const SECRETS = new Map<string, string>();
/** A recognisable secret: the label says what it is, 40 random hex digits make it this run's. */
function secret(label: string): string {
  const value = `${label}_${hex(20)}`;
  SECRETS.set(value, label);
  return value;
}
/** Secrets kept as given for a few minutes by design (the PKCE verifier while consent is pending): not looked for at rest. */
const TRANSIENT = new Set<string>();
function known(label: string, value: string): string {
  SECRETS.set(value, label);
  return value;
}
/** What to search for: the whole value and, for long ones, 16 characters from each end of its random part. */
function needles(value: string): string[] {
  const tail = value.slice(value.lastIndexOf('_') + 1);
  const core = tail.length >= 32 ? tail : value;
  return core.length >= 32 ? [value, core.slice(0, 16), core.slice(-16)] : [value];
}
/** [what, where] of every secret found in `text`, `except` the ones this text may carry. */
function leaks(text: string, where: string, except: string[] = []): string[] {
  const out: string[] = [];
  for (const [value, label] of SECRETS) {
    if (except.includes(value)) continue;
    for (const n of needles(value)) {
      const at = text.indexOf(n);
      if (at >= 0) {
        out.push(`${label} in ${where}: …${text.slice(Math.max(0, at - 80), at + n.length + 40)}…`);
        break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- the two organizations

interface Org {
  name: string;
  org: string;
  admin: string;
  member: string;
  keyIds: string[];
  /** A dashboard session token of the admin key. */
  session: string;
  /** The resources, by the path parameter that names them. */
  ids: Record<string, string>;
  /** Ids that are B's only: the names and ids no answer to A may contain. */
  private: Set<string>;
}

/** A unique name of one of `o`'s resources, kept among its private values. */
const nameOf = (o: Org, prefix: string) => {
  const n = `${prefix}-${hex(4)}`;
  o.private.add(n);
  return n;
};
const newOrg = (name: string): Org => ({ name, org: '', admin: '', member: '', keyIds: [], session: '', ids: {}, private: new Set() });

describe('isolation between organizations and secrecy of credentials', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sable-isolation-'));
  const dataDir = join(dir, 'data');
  let svc: RecordedService;
  const http = recorder(() => svc.url);
  const call = http.call;
  let oauth: OAuth2Server;
  let jira: Awaited<ReturnType<typeof startJira>>;
  let leaky: Awaited<ReturnType<typeof startLeakyPeer>>;
  const jiraTokens = new Set<string>();
  /** How the OAuth server answers token requests right now. */
  let oauthMode: 'ok' | 'refuse-refresh' | 'fail-exchange' = 'ok';
  const A = newOrg('alpha');
  const B = newOrg('beta');
  const MARK_B = `beta-marker-${hex(8)}`;
  const masterKey = known('master key', hex(32));
  const clientSecret = secret('atlassian_client_secret');
  const llmKey = secret('deployment_llm_key');
  let defaultAdmin = '';
  let doc: any;
  /** Calls made with A's keys naming B's resources. */
  let crossCalls = 0;

  /** What `sable keys create` does, in this process beside the running service (four CLI starts cost seconds on a loaded machine). */
  const keys = async (store: ControlStore, org: string, role: 'admin' | 'member') => {
    const o = await ensureOrg(store, org);
    const { key, record } = await createKey(store, o.id, role);
    return { org_id: o.id, key, key_id: record.key_id };
  };
  const ok = (r: Answer, what: string, status = 200) => {
    expect(r.status, `${what}: ${r.text.slice(0, 300)}`).toBe(status);
    return r.body;
  };
  const waitJob = async (key: string, id: string) => {
    for (let i = 0; i < 1200; i++) {
      const j = (await call('GET', `/ingestion/jobs/${id}`, { key })).body;
      if (j.status === 'completed' || j.status === 'failed') return j;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`job ${id} did not finish`);
  };
  /** Plays the browser: the OAuth server approves at once and sends it back to the callback. */
  const consent = async (authorizationUrl: string) => {
    const approve = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(approve.status).toBe(302);
    const back = approve.headers.get('location')!;
    known('OAuth authorization code', new URL(back).searchParams.get('code')!);
    return call('GET', back);
  };
  const connect = async (org: Org) => {
    const created = ok(await call('POST', '/connections', { key: org.admin, body: { provider: 'atlassian', source_type: 'jira' } }), 'create a connection', 201);
    const page = await consent(created.authorization_url);
    return { id: created.id as string, page };
  };

  beforeAll(async () => {
    oauth = await startOAuthMock('ada@beta.test');
    oauth.service.on('beforeResponse', (res: { body: Record<string, unknown>; statusCode: number }, req: { body: Record<string, string> }) => {
      const grant = req.body.grant_type;
      // Providers that quote the request in their refusal: the secrets it carried come back.
      if (oauthMode === 'fail-exchange' && grant === 'authorization_code') {
        res.statusCode = 400;
        res.body = { error: 'invalid_grant', error_description: `code ${req.body.code} is not valid for the client secret ${req.body.client_secret} (verifier ${req.body.code_verifier})` };
        return;
      }
      if (oauthMode === 'refuse-refresh' && grant === 'refresh_token') {
        res.statusCode = 400;
        res.body = { error: 'invalid_grant', error_description: `refresh token ${req.body.refresh_token} has been revoked` };
        return;
      }
      if (grant === 'authorization_code') TRANSIENT.add(known('PKCE verifier', req.body.code_verifier));
      if (typeof res.body.access_token === 'string') {
        res.body.access_token = secret('oauth_access_token');
        jiraTokens.add(res.body.access_token as string);
      }
      if (typeof res.body.refresh_token === 'string') res.body.refresh_token = secret('oauth_refresh_token');
      if (typeof res.body.id_token === 'string') res.body.id_token = secret('oauth_id_token');
    });
    jira = await startJira({ cloudId: 'cloud-b', tokens: jiraTokens });
    jira.issues.push({ id: '1', key: 'OPS-1', summary: 'Beta backups', description: `Backups run at two in the morning. ${MARK_B}`, status: 'Done', updated: '2026-11-01T10:00:00.000+0000', comments: [] });
    leaky = await startLeakyPeer();
    const issuer = oauth.issuer.url!;
    svc = await serveRecorded(
      [
        '--port', '0', '--data-dir', dataDir, '--log-requests', 'true', '--allow-private-network', 'true',
        '--openai-url', `${leaky.url}/openai/v1`, '--rerank-provider', 'cohere', '--rerank-url', `${leaky.url}/rerank`, '--llm-url', `${leaky.url}/llm`, '--google-token-url', `${leaky.url}/google/token`,
        '--atlassian-api-url', jira.url, '--atlassian-client-id', 'sable-atlassian', '--atlassian-authorize-url', `${issuer}/authorize`,
        '--atlassian-token-url', `${issuer}/token`, '--atlassian-userinfo-url', `${issuer}/userinfo`, '--atlassian-revoke-url', `${leaky.url}/oauth/revoke`,
      ],
      { SABLE_MASTER_KEY: masterKey, SABLE_ATLASSIAN_CLIENT_SECRET: clientSecret, SABLE_LLM_API_KEY: llmKey },
    );
    defaultAdmin = known('first-start admin key', readFileSync(join(dataDir, 'admin.key'), 'utf8').trim());
    doc = ok(await call('GET', '/openapi.json'), 'the route table');

    // Two organizations, each with an admin and a member key.
    const control = new ControlStore(dataDir);
    const [aAdmin, bAdmin, aMember, bMember] = [await keys(control, 'alpha', 'admin'), await keys(control, 'beta', 'admin'), await keys(control, 'alpha', 'member'), await keys(control, 'beta', 'member')];
    await control.close();
    for (const [o, admin, member] of [[A, aAdmin, aMember], [B, bAdmin, bMember]] as const) {
      o.org = admin.org_id;
      o.admin = known(`${o.name} admin key`, admin.key);
      o.member = known(`${o.name} member key`, member.key);
      o.keyIds = [admin.key_id, member.key_id];
      const s = await call('POST', '/auth/sessions', { key: o.admin });
      o.session = known(`${o.name} session token`, ok(s, 'a session token', 201).token);
      s.exchange.issues.push(o.session);
    }
    expect(aAdmin.org_id).not.toBe(bAdmin.org_id);
    expect(aMember.org_id).toBe(aAdmin.org_id);

    await createB();
    await createA();
    // Names of B's resources are in B.private already; secret refs are per-organization names and
    // the Drive file id is made up: neither is B's alone.
    const shared = new Set(['type', 'secretRef', 'fileId']);
    for (const v of [B.org, ...B.keyIds, ...Object.entries(B.ids).filter(([k]) => !shared.has(k)).map(([, v]) => v), MARK_B]) B.private.add(v);
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    await oauth?.stop();
    await jira?.close();
    await leaky?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One of every resource kind in B, secrets in every place a secret can go. */
  async function createB() {
    const k = B.admin;
    const text = ok(await call('POST', '/datasets', { key: k, body: { name: nameOf(B, 'beta-docs') } }), 'B dataset', 201);
    B.ids.datasetId = text.id;
    ok(await call('POST', `/datasets/${text.id}/ensure-engine`, { key: k }), 'B engine');
    // No promotion while the test runs: B's stats must read the same before and after.
    ok(await call('PUT', `/datasets/${text.id}/promotion-policy`, { key: k, body: { max_buffer_vectors: 1_000_000, max_buffer_age_ms: 3_600_000 } }), 'B policy');
    B.ids.vectorId = nameOf(B, 'beta-vec');
    ok(await call('POST', `/datasets/${text.id}/insert`, { key: k, body: { vectors: [{ id: B.ids.vectorId, metadata: { text: `Beta private note about the lighthouse. ${MARK_B}`, marker: MARK_B } }] } }), 'B insert');

    // A file_upload source, an upload and its ingestion job, and the document it made.
    const files = ok(await call('POST', '/ingestion/sources', { key: k, body: { source_type: 'file_upload', name: nameOf(B, 'beta-files'), config: {} } }), 'B file source', 201);
    B.ids.sourceId = files.id;
    const bytes = new TextEncoder().encode(`# The lighthouse\n\nThe keeper climbs 217 steps every evening to light the lamp. ${MARK_B}\n`);
    const init = ok(await call('POST', `/ingestion/sources/${files.id}/upload/init`, { key: k, body: { dataset_id: text.id, files: [{ name: 'beta-lighthouse.md', size_bytes: bytes.byteLength, content_type: 'text/markdown' }] } }), 'B upload init');
    ok(await call('PUT', init.uploads[0].upload_url, { raw: bytes, headers: { 'content-type': 'text/markdown' } }), 'B upload');
    ok(await call('POST', `/ingestion/sources/${files.id}/upload/complete`, { key: k, body: { job_id: init.job_id, file_ids: [init.uploads[0].file_id] } }), 'B complete');
    B.ids.jobId = init.job_id;
    B.ids.uploadFile = init.uploads[0].file_id;
    expect((await waitJob(k, init.job_id)).status).toBe('completed');
    B.ids.documentId = ok(await call('GET', `/datasets/${text.id}/documents`, { key: k }), 'B documents').documents[0].id;

    // A Parquet load (the bulk path) into the same dataset.
    const vectors = new Float32Array(2 * 384).map((_, i) => ((i * 7) % 13) / 13);
    const parquet = parquetBytes([{ ids: BigInt64Array.of(900001n, 900002n), vectors, dim: 384 }]);
    const pinit = ok(await call('POST', `/v1/datasets/${text.id}/upload/init`, { key: k, body: { files: [{ name: 'beta.parquet', size_bytes: parquet.byteLength, content_type: 'application/vnd.apache.parquet' }] } }), 'B parquet init');
    ok(await call('PUT', pinit.uploads[0].upload_url, { raw: Buffer.from(parquet), headers: { 'content-type': 'application/vnd.apache.parquet' } }), 'B parquet put');
    B.ids.uploadToken = new URL(pinit.uploads[0].upload_url).pathname.split('/').pop()!;
    B.ids.parquetFile = pinit.uploads[0].file_id;
    ok(await call('POST', `/v1/datasets/${text.id}/upload/complete`, { key: k, body: { job_id: pinit.job_id, file_ids: [pinit.uploads[0].file_id] } }), 'B parquet complete');
    B.ids.parquetJob = pinit.job_id;
    expect((await waitJob(k, pinit.job_id)).status).toBe('completed');

    // Sources with credentials, pointed at the leaky upstream, and their failing runs.
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    known('service account private key', pem.split('\n').slice(3, 4).join(''));
    const saKeyId = secret('service_account_key_id');
    const configs: [string, Record<string, unknown>][] = [
      ['s3', { bucket: nameOf(B, 'beta-bucket'), endpoint: `${leaky.url}/s3`, access_key_id: secret('s3_access_key_id'), secret_access_key: secret('s3_secret_access_key'), file_patterns: ['*.md'] }],
      ['confluence', { base_url: `${leaky.url}/wiki`, username: 'ada@beta.test', api_token: secret('confluence_api_token'), spaces: ['ENG'] }],
      ['gitlab', { gitlab_url: `${leaky.url}/gitlab`, projects: ['beta/handbook'], auth_mode: 'token', access_token: secret('gitlab_access_token') }],
      ['jira', { cloud_id: 'cloud-b', access_token: secret('jira_access_token'), project_keys: ['OPS'] }],
      ['gdrive', { folder_ids: ['folder-b'], service_account_json: JSON.stringify({ type: 'service_account', client_email: 'reader@beta.test', private_key_id: saKeyId, private_key: pem }) }],
    ];
    for (const [type, config] of configs) {
      const s = ok(await call('POST', '/ingestion/sources', { key: k, body: { source_type: type, name: nameOf(B, `beta-${type}`), config } }), `B ${type} source`, 201);
      B.ids[`${type}Source`] = s.id;
      // Confluence basic auth goes out as base64 of user:token: that spelling must not come back either.
      if (type === 'confluence') known('confluence basic credentials', Buffer.from(`ada@beta.test:${config.api_token}`).toString('base64'));
    }
    // Their runs fail at the leaky upstream (Drive is left alone: it needs Google's token server).
    const failing = await Promise.all(['s3', 'confluence', 'gitlab', 'jira'].map(async (t) => ok(await call('POST', '/ingestion/jobs', { key: k, body: { source_id: B.ids[`${t}Source`], dataset_id: text.id } }), `B ${t} job`, 201).job_id as string));
    for (const id of failing) expect((await waitJob(k, id)).status).toBe('failed');
    B.ids.failedJob = failing[0];

    // A connection through consent, a jira source on it, and its run (tokens refreshed and used).
    const conn = await connect(B);
    expect(conn.page.text).toContain('Connected as ada@beta.test');
    B.ids.connectionId = conn.id;
    const jiraSource = ok(await call('POST', '/ingestion/sources', { key: k, body: { source_type: 'jira', name: nameOf(B, 'beta-jira-conn'), config: { cloud_id: 'cloud-b', connection_id: conn.id, project_keys: ['OPS'] } } }), 'B jira on a connection', 201);
    B.ids.jiraConnSource = jiraSource.id;
    const jiraJob = await waitJob(k, ok(await call('POST', '/ingestion/jobs', { key: k, body: { source_id: jiraSource.id, dataset_id: text.id } }), 'B jira job', 201).job_id);
    expect(jiraJob.status, JSON.stringify(jiraJob)).toBe('completed');
    // The same connection's token sent to an upstream that quotes it back (a wiki at base_url).
    const wiki = ok(await call('POST', '/ingestion/sources', { key: k, body: { source_type: 'confluence', name: nameOf(B, 'beta-wiki-conn'), config: { base_url: `${leaky.url}/wiki-conn`, auth_mode: 'connection', connection_id: conn.id, spaces: ['ENG'] } } }), 'B wiki on a connection', 201);
    B.ids.wikiConnSource = wiki.id;
    const wikiJob = await waitJob(k, ok(await call('POST', '/ingestion/jobs', { key: k, body: { source_id: wiki.id, dataset_id: text.id } }), 'B wiki job', 201).job_id);
    expect(wikiJob.status).toBe('failed');
    expect(leaky.calls.some((c) => c.path.startsWith('/wiki-conn') && jiraTokens.has((c.authorization ?? '').replace('Bearer ', '')))).toBe(true);
    // And to a code host that quotes it back (GitLab reads through any connection's token).
    const code = ok(await call('POST', '/ingestion/sources', { key: k, body: { source_type: 'gitlab', name: nameOf(B, 'beta-gitlab-conn'), config: { gitlab_url: `${leaky.url}/gitlab-conn`, projects: ['beta/handbook'], auth_mode: 'oauth', connection_id: conn.id } } }), 'B gitlab on a connection', 201);
    B.ids.gitlabConnSource = code.id;
    expect((await waitJob(k, ok(await call('POST', '/ingestion/jobs', { key: k, body: { source_id: code.id, dataset_id: text.id } }), 'B gitlab conn job', 201).job_id)).status).toBe('failed');
    expect(leaky.calls.some((c) => c.path.startsWith('/gitlab-conn') && jiraTokens.has((c.authorization ?? '').replace('Bearer ', '')))).toBe(true);

    // A connection whose refresh the provider refuses, quoting the refresh token.
    const refused = await connect(B);
    B.ids.refusedConnection = refused.id;
    const refusedSource = ok(await call('POST', '/ingestion/sources', { key: k, body: { source_type: 'jira', name: nameOf(B, 'beta-jira-refused'), config: { cloud_id: 'cloud-b', connection_id: refused.id, project_keys: ['OPS'] } } }), 'B refused source', 201);
    B.ids.refusedSource = refusedSource.id;
    oauthMode = 'refuse-refresh';
    const refusedJob = await waitJob(k, ok(await call('POST', '/ingestion/jobs', { key: k, body: { source_id: refusedSource.id, dataset_id: text.id } }), 'B refused job', 201).job_id);
    oauthMode = 'ok';
    expect(refusedJob.status).toBe('failed');
    expect(ok(await call('GET', `/connections/${refused.id}`, { key: k }), 'B refused connection').status).toBe('error');

    // A consent whose code exchange fails, the provider quoting the code and the client secret.
    oauthMode = 'fail-exchange';
    const failed = await connect(B);
    oauthMode = 'ok';
    expect(failed.page.status).toBe(400);
    B.ids.failedConnection = failed.id;

    // A connection deleted while the revocation endpoint refuses, quoting the token.
    const revoked = await connect(B);
    expect((await call('DELETE', `/connections/${revoked.id}`, { key: k })).status).toBe(204);
    expect(leaky.calls.some((c) => c.path === '/oauth/revoke')).toBe(true);

    // A schedule (yearly: it does not fire while the test runs).
    B.ids.scheduleId = ok(await call('POST', '/ingestion/schedules', { key: k, body: { source_id: files.id, dataset_id: text.id, cron: '0 0 1 1 *', name: nameOf(B, 'beta-schedule') } }), 'B schedule', 201).id;

    // Organization secrets: an embedding key and the model key, both echoed back by the upstream.
    B.ids.secretRef = `beta-embedding-${hex(4)}`;
    const embKey = secret('org_secret_embedding_key');
    ok(await call('PUT', `/org-secrets/${B.ids.secretRef}`, { key: k, body: { value: embKey } }), 'B secret', 201);
    ok(await call('PUT', '/org-secrets/llm_api_key', { key: k, body: { value: secret('org_secret_llm_key') } }), 'B llm secret', 201);
    const openai = ok(await call('POST', '/datasets', { key: k, body: { name: nameOf(B, 'beta-openai'), embedding: { provider: 'openai', model: 'text-embedding-3-small', secret_ref: B.ids.secretRef } } }), 'B openai dataset', 201);
    B.ids.openaiDataset = openai.id;
    ok(await call('POST', `/datasets/${openai.id}/ensure-engine`, { key: k }), 'B openai engine');
    const embed = await call('POST', `/datasets/${openai.id}/embed`, { key: k, body: { text: 'anything' } });
    expect(embed.status, embed.text).toBe(502);
    expect(leaky.calls.at(-1)!.authorization).toBe(`Bearer ${embKey}`);
    // A reranker that refuses its key, quoting it: the search fails open (the reason says why) or fails.
    const rerankKey = secret('org_secret_rerank_key');
    ok(await call('PUT', '/org-secrets/rerank:cohere:api_key', { key: k, body: { value: rerankKey } }), 'B rerank secret', 201);
    const open = ok(await call('POST', `/datasets/${text.id}/search`, { key: k, body: { query_text: 'lighthouse', top_k: 2, rerank: { provider: 'cohere' } } }), 'B reranked search');
    expect(open.rerank).toMatchObject({ requested: true, applied: false });
    expect(leaky.calls.at(-1)!.authorization).toBe(`Bearer ${rerankKey}`);
    expect((await call('POST', `/datasets/${text.id}/search`, { key: k, body: { query_text: 'lighthouse', top_k: 2, rerank: { provider: 'cohere', fail_open: false } } })).status).toBe(502);

    // A chat session, a message, and a question asked in it (the model fails: extractive answer).
    const session = ok(await call('POST', '/intelligence/sessions', { key: k, body: { title: nameOf(B, 'beta-session'), dataset_id: text.id } }), 'B session', 201);
    B.ids.sessionId = session.id;
    ok(await call('POST', `/intelligence/sessions/${session.id}/messages`, { key: k, body: { role: 'user', content: `remember ${MARK_B}` } }), 'B message', 201);
    B.ids.runId = nameOf(B, 'beta-run');
    const answer = ok(await call('POST', '/intelligence/query', { key: k, body: { query: 'How many steps does the keeper climb?', dataset_ids: [text.id], session_id: session.id, run_id: B.ids.runId, stream: false, mode: 'fast' } }), 'B question');
    expect(answer.answer).toContain('217');
    B.ids.ref = answer.sources.find((s: { preview_ref?: string }) => s.preview_ref).preview_ref;
    for (let i = 0; i < 200 && ok(await call('GET', `/intelligence/sessions/${session.id}/messages`, { key: k }), 'B messages').messages.length < 3; i++) await new Promise((r) => setTimeout(r, 25));
    // The dashboard reads B's bucket with B's credentials (the upstream refuses, echoing them).
    const info = ok(await call('GET', `/sources/info?source_path=${encodeURIComponent(`s3://${configs[0][1].bucket}/notes.md`)}`, { bearer: B.session }), 'B info');
    expect(info).toMatchObject({ source_id: B.ids.s3Source, readable: false });
    B.ids.fileId = `beta-drive-file-${hex(4)}`;
    B.ids.type = 's3';
  }

  /** A's own resources, for the calls that need A's ids beside B's. */
  async function createA() {
    const k = A.admin;
    const ds = ok(await call('POST', '/datasets', { key: k, body: { name: `alpha-docs-${hex(4)}` } }), 'A dataset', 201);
    A.ids.datasetId = ds.id;
    ok(await call('POST', `/datasets/${ds.id}/ensure-engine`, { key: k }), 'A engine');
    A.ids.vectorId = `alpha-vec-${hex(4)}`;
    ok(await call('POST', `/datasets/${ds.id}/insert`, { key: k, body: { vectors: [{ id: A.ids.vectorId, metadata: { text: 'Alpha keeps its lamps in the shed.' } }] } }), 'A insert');
    A.ids.sourceId = ok(await call('POST', '/ingestion/sources', { key: k, body: { source_type: 'file_upload', name: `alpha-files-${hex(4)}`, config: {} } }), 'A source', 201).id;
    A.ids.jobId = ok(await call('POST', `/ingestion/sources/${A.ids.sourceId}/upload/init`, { key: k, body: { dataset_id: ds.id, files: [{ name: 'a.txt', size_bytes: 5, content_type: 'text/plain' }] } }), 'A upload init').job_id;
    A.ids.parquetJob = ok(await call('POST', `/datasets/${ds.id}/upload/init`, { key: k, body: { files: [{ name: 'a.parquet', size_bytes: 100, content_type: 'application/vnd.apache.parquet' }] } }), 'A parquet init').job_id;
    A.ids.scheduleId = ok(await call('POST', '/ingestion/schedules', { key: k, body: { source_id: A.ids.sourceId, dataset_id: ds.id, cron: '0 0 1 1 *' } }), 'A schedule', 201).id;
    A.ids.connectionId = ok(await call('POST', '/connections', { key: k, body: { provider: 'atlassian', source_type: 'jira' } }), 'A connection', 201).id;
    A.ids.sessionId = ok(await call('POST', '/intelligence/sessions', { key: k, body: { title: 'alpha session' } }), 'A session', 201).id;
    A.ids.runId = `alpha-run-${hex(4)}`;
    const answer = ok(await call('POST', '/intelligence/query', { key: k, body: { query: 'Where are the lamps kept?', dataset_ids: [ds.id], run_id: A.ids.runId, stream: false, mode: 'fast' } }), 'A question');
    A.ids.ref = answer.sources.find((s: { preview_ref?: string }) => s.preview_ref)?.preview_ref ?? 'none.none';
    A.ids.documentId = '00000000-0000-4000-8000-000000000000';
    A.ids.fileId = 'alpha-drive-file';
    A.ids.secretRef = `alpha-secret-${hex(4)}`;
    ok(await call('PUT', `/org-secrets/${A.ids.secretRef}`, { key: k, body: { value: secret('alpha_org_secret') } }), 'A secret', 201);
    A.ids.type = 's3';
  }

  // ---------------------------------------------------------------- the route table

  interface Op {
    method: string;
    path: string;
    auth: 'none' | 'key' | 'admin' | 'session';
    params: string[];
    json: boolean;
    multipart: boolean;
    raw: boolean;
    bodyFields: string[];
  }
  const routes = (): Op[] =>
    Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([m, op]) => {
        const content = op.requestBody?.content ?? {};
        return {
          method: m.toUpperCase(),
          path,
          auth: op['x-sable-auth'],
          params: [...path.matchAll(/\{(\w+)\}/g)].map((x) => x[1]),
          json: 'application/json' in content,
          multipart: 'multipart/form-data' in content,
          raw: '*/*' in content,
          bodyFields: Object.keys(content['application/json']?.schema?.properties ?? {}),
        };
      }),
    );
  const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

  /**
   * What a path parameter names. `code`: the answer for another organization's value (404);
   * `namespace`: names chosen per organization (another's name is the caller's own, unset);
   * `global`: the same for everyone; `capability`: the value itself authenticates;
   * `external`: an id at an outside service, read with the caller's own credentials only.
   */
  type ParamKind = { code: string; status: number } | 'namespace' | 'global' | 'capability' | 'external';
  const PARAMS: Record<string, ParamKind> = {
    datasetId: { code: 'dataset_not_found', status: 404 },
    sourceId: { code: 'source_not_found', status: 404 },
    jobId: { code: 'job_not_found', status: 404 },
    scheduleId: { code: 'schedule_not_found', status: 404 },
    connectionId: { code: 'connection_not_found', status: 404 },
    sessionId: { code: 'session_not_found', status: 404 },
    runId: { code: 'run_not_found', status: 404 },
    documentId: { code: 'document_not_found', status: 404 },
    // A vector id and a preview reference name nothing outside their dataset and organization.
    vectorId: { code: 'not_found', status: 404 },
    ref: { code: 'not_found', status: 404 },
    secretRef: 'namespace',
    type: 'global',
    token: 'capability',
    fileId: 'external',
  };

  /** A valid body per JSON route: with it only the owner of the ids is wrong. */
  const BODIES: Record<string, (o: Org) => unknown> = {
    'POST /connections': () => ({ provider: 'atlassian', source_type: 'jira' }),
    'POST /sources/batch-info': () => ({ source_paths: ['s3://nowhere/x'] }),
    'POST /datasets': () => ({ name: `alpha-more-${hex(4)}` }),
    'POST /datasets/{datasetId}/index': () => ({ index_type: 'flat' }),
    'PATCH /datasets/{datasetId}/schema': () => ({ schema: [{ name: 'lang', type: 'text' }] }),
    'PUT /datasets/{datasetId}/hybrid/enabled': () => ({ enabled: true }),
    'PUT /datasets/{datasetId}/hybrid/alpha': () => ({ alpha: 0.5 }),
    'PUT /datasets/{datasetId}/promotion-policy': () => ({ max_buffer_vectors: 10 }),
    'POST /datasets/{datasetId}/defaults/index-type': () => ({ index_type: 'flat' }),
    'POST /datasets/{datasetId}/defaults/tuning': () => ({ nlist: 8 }),
    'PUT /datasets/{datasetId}/sla': () => ({ target_p99_us: 5000 }),
    'POST /intelligence/query': (o) => ({ query: 'How many steps does the keeper climb?', dataset_ids: [o.ids.datasetId], stream: false, mode: 'fast' }),
    'POST /ingestion/jobs': (o) => ({ source_id: o.ids.sourceId, dataset_id: o.ids.datasetId }),
    'POST /ingestion/schedules': (o) => ({ source_id: o.ids.sourceId, dataset_id: o.ids.datasetId, cron: '0 0 1 1 *' }),
    'PATCH /ingestion/schedules/{scheduleId}': () => ({ enabled: false }),
    'PUT /org-secrets/{secretRef}': () => ({ value: secret('alpha_overwrite_attempt') }),
    'POST /org-secrets/{secretRef}': () => ({ value: secret('alpha_overwrite_attempt') }),
    'POST /intelligence/sessions': (o) => ({ title: 'more', dataset_id: o.ids.datasetId }),
    'POST /intelligence/sessions/{sessionId}/messages': () => ({ role: 'user', content: 'hello' }),
    'POST /ingestion/sources/validate': () => ({ source_type: 'file_upload', config: {} }),
    'POST /ingestion/sources': () => ({ source_type: 'file_upload', name: `alpha-more-${hex(4)}`, config: {} }),
    'PATCH /ingestion/sources/{sourceId}': () => ({ name: 'renamed' }),
    'POST /ingestion/sources/{sourceId}/upload/init': (o) => ({ dataset_id: o.ids.datasetId, files: [{ name: 'x.txt', size_bytes: 5, content_type: 'text/plain' }] }),
    'POST /ingestion/sources/{sourceId}/upload/complete': (o) => ({ job_id: o.ids.jobId, file_ids: [] }),
    'POST /datasets/{datasetId}/upload/init': () => ({ files: [{ name: 'x.parquet', size_bytes: 100, content_type: 'application/vnd.apache.parquet' }] }),
    'POST /datasets/{datasetId}/upload/complete': (o) => ({ job_id: o.ids.parquetJob, file_ids: [] }),
    'POST /datasets/{datasetId}/insert': () => ({ vectors: [{ id: 'alpha-x', metadata: { text: 'x' } }] }),
    'DELETE /datasets/{datasetId}/vectors': (o) => ({ ids: [o.ids.vectorId] }),
    'POST /datasets/{datasetId}/search': () => ({ query_text: 'lighthouse', top_k: 3, include_documents: true }),
    'POST /datasets/{datasetId}/embed': () => ({ text: 'lighthouse' }),
  };

  /**
   * Routes without path parameters. `list`: the caller's collection (B's ids never in A's);
   * `create`: writes in the caller's organization only; `refs`: names resources in its body
   * (checked by REFS); `org`: acts on the whole caller's organization; `public`/`callback`: no key.
   */
  const NO_PARAMS: Record<string, 'list' | 'create' | 'refs' | 'org' | 'public' | 'callback' | 'global' | 'session'> = {
    'GET /healthz': 'public',
    'GET /metrics': 'public',
    'GET /openapi.json': 'public',
    'GET /connections/callback': 'callback',
    'GET /datasets': 'list',
    'POST /datasets': 'create',
    'GET /connections': 'list',
    'POST /connections': 'create',
    'POST /auth/sessions': 'create',
    'GET /sources/info': 'session',
    'POST /sources/batch-info': 'session',
    'DELETE /auth/sessions': 'session',
    'POST /intelligence/query': 'refs',
    'GET /ingestion/jobs': 'list',
    'POST /ingestion/jobs': 'refs',
    'GET /ingestion/schedules': 'list',
    'POST /ingestion/schedules': 'refs',
    'GET /org-secrets': 'list',
    'POST /intelligence/sessions': 'refs',
    'GET /intelligence/sessions': 'list',
    'GET /ingestion/source-types': 'global',
    'GET /ingestion/sources': 'list',
    'POST /ingestion/sources/validate': 'refs',
    'POST /ingestion/sources': 'create',
    'GET /ingestion/sources/unused': 'list',
    'POST /ingestion/sources/cleanup': 'org',
  };

  /** Body fields that are ids, per route: A's request with one of B's ids there, and the answer it gets. */
  const REFS: Record<string, { field: string; body: () => unknown; code: string; status?: number; path?: () => string }[]> = {
    'POST /ingestion/jobs': [
      { field: 'source_id', body: () => ({ source_id: B.ids.sourceId, dataset_id: A.ids.datasetId }), code: 'source_not_found' },
      { field: 'dataset_id', body: () => ({ source_id: A.ids.sourceId, dataset_id: B.ids.datasetId }), code: 'dataset_not_found' },
    ],
    'POST /ingestion/schedules': [
      { field: 'source_id', body: () => ({ source_id: B.ids.sourceId, dataset_id: A.ids.datasetId, cron: '0 0 1 1 *' }), code: 'source_not_found' },
      { field: 'dataset_id', body: () => ({ source_id: A.ids.sourceId, dataset_id: B.ids.datasetId, cron: '0 0 1 1 *' }), code: 'dataset_not_found' },
    ],
    'POST /intelligence/query': [
      { field: 'dataset_ids', body: () => ({ query: 'How many steps does the keeper climb?', dataset_ids: [B.ids.datasetId], stream: false }), code: 'dataset_not_found' },
      { field: 'session_id', body: () => ({ query: 'How many steps does the keeper climb?', session_id: B.ids.sessionId, stream: false }), code: 'session_not_found' },
      // A run id is the caller's own name: B's names A's own new run, never B's (checked in the answer).
      { field: 'run_id', body: () => ({ query: 'How many steps does the keeper climb?', run_id: B.ids.runId, dataset_ids: [A.ids.datasetId], stream: false }), code: '' },
      // Retired by the contract: refused whatever it names.
      { field: 'dataset_id', body: () => ({ query: 'How many steps does the keeper climb?', dataset_id: B.ids.datasetId, stream: false }), code: 'invalid_request', status: 400 },
    ],
    'POST /intelligence/sessions': [{ field: 'dataset_id', body: () => ({ dataset_id: B.ids.datasetId }), code: 'dataset_not_found' }],
    'POST /ingestion/sources/{sourceId}/upload/init': [
      { field: 'dataset_id', path: () => `/ingestion/sources/${A.ids.sourceId}/upload/init`, body: () => ({ dataset_id: B.ids.datasetId, files: [{ name: 'x.txt', size_bytes: 5, content_type: 'text/plain' }] }), code: 'dataset_not_found' },
    ],
    'POST /ingestion/sources/{sourceId}/upload/complete': [
      { field: 'job_id', path: () => `/ingestion/sources/${A.ids.sourceId}/upload/complete`, body: () => ({ job_id: B.ids.jobId, file_ids: [] }), code: 'job_not_found' },
      // Another job's file is not one of this job's: nothing is confirmed.
      { field: 'file_ids', path: () => `/ingestion/sources/${A.ids.sourceId}/upload/complete`, body: () => ({ job_id: A.ids.jobId, file_ids: [B.ids.uploadFile] }), code: 'invalid_request', status: 400 },
    ],
    'POST /datasets/{datasetId}/upload/complete': [
      { field: 'job_id', path: () => `/datasets/${A.ids.datasetId}/upload/complete`, body: () => ({ job_id: B.ids.parquetJob, file_ids: [] }), code: 'job_not_found' },
      { field: 'file_ids', path: () => `/datasets/${A.ids.datasetId}/upload/complete`, body: () => ({ job_id: A.ids.parquetJob, file_ids: [B.ids.parquetFile] }), code: 'invalid_request', status: 400 },
    ],
    'POST /ingestion/sources/validate': [
      // A connection id lives in a source's config: another organization's grant is not used.
      { field: 'config', body: () => ({ source_type: 'jira', config: { cloud_id: 'cloud-b', connection_id: B.ids.connectionId, project_keys: ['OPS'] } }), code: '' },
    ],
    'POST /ingestion/sources': [
      { field: 'config', body: () => ({ source_type: 'jira', name: `alpha-borrow-${hex(4)}`, config: { cloud_id: 'cloud-b', connection_id: B.ids.connectionId, project_keys: ['OPS'] } }), code: '' },
    ],
  };
  /** Routes with a parameter that names no organization's resource, and where each is checked. */
  const SPECIAL: Record<string, string> = {
    'PUT /org-secrets/{secretRef}': "A's write of B's secret name makes A's own; B's value stays (ids in bodies)",
    'POST /org-secrets/{secretRef}': 'the same as PUT',
    'DELETE /org-secrets/{secretRef}': "A's delete of B's secret name is not_found (ids in bodies)",
    'GET /ingestion/source-types/{type}': 'the same for every organization',
    'PUT /uploads/{token}': 'the token authenticates itself: an altered one is 403 (dashboard)',
    'GET /sources/stream/gdrive/{fileId}': "read with the caller's own gdrive sources only: 410 for A (dashboard)",
  };
  /** Body fields ending in _id(s) that name nothing (free labels). */
  const NOT_REFS = new Set(['pipeline_id', 'workspace_id']);

  const fill = (path: string, pick: (param: string) => string) => path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(pick(p)));
  /** B's ids this text shows, besides the ones the request itself named. */
  const bData = (text: string, named: string[]) => [...B.private].filter((v) => !named.includes(v) && text.includes(v));
  const multipart = () => {
    const form = new FormData();
    form.append('files', new Blob([new Uint8Array(16)], { type: 'application/vnd.apache.parquet' }), 'x.parquet');
    return form;
  };
  const bodyOf = (r: Op, o: Org) => (r.json ? { body: BODIES[key(r)]!(o) } : r.multipart ? { raw: multipart() } : {});

  it('the generator knows every route of the table', () => {
    const unknown: string[] = [];
    for (const r of routes()) {
      if (!['none', 'key', 'admin', 'session'].includes(r.auth)) unknown.push(`${key(r)}: auth ${r.auth}`);
      for (const p of r.params) if (!PARAMS[p]) unknown.push(`${key(r)}: parameter ${p}`);
      if (r.params.some((p) => typeof PARAMS[p] === 'string') && !SPECIAL[key(r)]) unknown.push(`${key(r)}: a parameter that is no resource id: add a check and list it in SPECIAL`);
      if (r.params.length === 0 && !NO_PARAMS[key(r)]) unknown.push(`${key(r)}: no class`);
      if (r.json && !BODIES[key(r)]) unknown.push(`${key(r)}: no body`);
      if (!r.json && !r.multipart && !r.raw && doc.paths[r.path][r.method.toLowerCase()].requestBody) unknown.push(`${key(r)}: a body of an unknown type`);
      for (const f of r.bodyFields) {
        if (!/_ids?$/.test(f) || NOT_REFS.has(f)) continue;
        if (!REFS[key(r)]?.some((x) => x.field === f)) unknown.push(`${key(r)}: body field ${f} names a resource: add it to REFS`);
      }
    }
    expect(unknown).toEqual([]);
    expect(routes().length).toBeGreaterThan(70);
  });

  /** Every GET route an organization can read, read by its admin: what must not change whatever others do. */
  const snapshot = async (o: Org) => {
    const out: Record<string, { status: number; body: unknown }> = {};
    for (const r of routes()) {
      if (r.method !== 'GET' || r.auth === 'none' || r.auth === 'session') continue;
      if (r.params.some((p) => PARAMS[p] === 'external' || PARAMS[p] === 'capability')) continue;
      const path = fill(r.path, (p) => o.ids[p]);
      const res = await call('GET', path, { key: o.admin });
      out[path] = { status: res.status, body: res.body };
    }
    return out;
  };

  describe('another organization', () => {
    let before: Record<string, { status: number; body: unknown }>;
    /** B's ids A wrote into its own records (a source naming B's connection, a run named like B's): A may read them back. */
    const namedByA = new Set<string>();

    beforeAll(async () => {
      before = await snapshot(B);
      // Positive control: B reads every one of its resources.
      for (const [path, v] of Object.entries(before)) expect(v.status, `${path}: ${JSON.stringify(v.body)}`).toBeLessThan(300);
    });

    it("gets *_not_found for every route and id of B, and nothing of B's", async () => {
      const wrong: string[] = [];
      const checks: (() => Promise<void>)[] = [];
      for (const r of routes()) {
        if (r.params.length === 0 || r.auth === 'none' || r.auth === 'session') continue;
        const kinds = r.params.map((p) => PARAMS[p]);
        if (kinds.some((k) => typeof k === 'string')) continue; // namespace, global, external, capability: below
        // All of B's ids, then for each later parameter A's ids before it and B's there.
        const variants = r.params.map((_, i) => ({ b: i === 0 ? r.params : [r.params[i]], expect: kinds[i] as { code: string; status: number } }));
        for (const v of variants) {
          for (const caller of [A.admin, A.member]) {
            // A member is refused an admin route for its role, before any id is looked up.
            const expected = r.auth === 'admin' && caller === A.member ? { code: 'insufficient_role', status: 403 } : v.expect;
            checks.push(async () => {
              const path = fill(r.path, (p) => (v.b.includes(p) ? B.ids[p] : A.ids[p]));
              const res = await call(r.method, path, { key: caller, ...bodyOf(r, A) });
              crossCalls++;
              if (res.status !== expected.status || res.body?.error !== expected.code) wrong.push(`${r.method} ${path} (${caller === A.admin ? 'admin' : 'member'}): ${res.status} ${res.text.slice(0, 200)}`);
              const shown = bData(res.text, v.b.map((p) => B.ids[p]));
              if (shown.length) wrong.push(`${r.method} ${path}: shows B's ${shown.join(', ')}`);
            });
          }
        }
      }
      await inBatches(checks, 6);
      expect(wrong).toEqual([]);
      expect(crossCalls).toBeGreaterThan(100);
    });

    it("ids of B in bodies are not found; B's run id and connection are not B's for A", async () => {
      const wrong: string[] = [];
      for (const [route, refs] of Object.entries(REFS)) {
        const [method, pattern] = route.split(' ');
        for (const ref of refs) {
          const path = ref.path?.() ?? pattern;
          const body = ref.body();
          const res = await call(method, path, { key: A.admin, body });
          crossCalls++;
          const named = JSON.stringify(body);
          for (const v of B.private) if (named.includes(v)) namedByA.add(v);
          if (ref.code && (res.status !== (ref.status ?? 404) || res.body?.error !== ref.code)) wrong.push(`${route} with B's ${ref.field}: ${res.status} ${res.text.slice(0, 200)}`);
          if (!ref.code && res.status >= 500) wrong.push(`${route} with B's ${ref.field}: ${res.status} ${res.text.slice(0, 200)}`);
          const shown = bData(res.text, [...B.private].filter((v) => named.includes(v)));
          if (shown.length) wrong.push(`${route} with B's ${ref.field}: shows B's ${shown.join(', ')}`);
          if (route === 'POST /ingestion/sources/validate' && res.body?.success !== false) wrong.push(`validate used B's connection: ${res.text.slice(0, 200)}`);
          if (route === 'POST /ingestion/sources' && res.status === 201) {
            // Created in A, naming B's connection: its run must not read with B's grant.
            const job = await waitJob(A.admin, ok(await call('POST', '/ingestion/jobs', { key: A.admin, body: { source_id: res.body.id, dataset_id: A.ids.datasetId } }), 'A job on B connection', 201).job_id);
            if (job.status !== 'failed') wrong.push(`a source of A ran on B's connection: ${JSON.stringify(job)}`);
            ok(await call('DELETE', `/ingestion/sources/${res.body.id}?force=true`, { key: A.admin }), "A's borrowing source deleted", 204);
          }
          // B's passage, not its bare number: '217' also turns up in ids and timings by chance (it
          // failed a clean CI run once, on an answer that found nothing).
          if (route === 'POST /intelligence/query' && ref.field === 'run_id' && (res.status !== 200 || res.text.includes('217 steps'))) wrong.push(`A's run named like B's: ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
      // A body cannot move a resource into another organization or onto B's source and dataset.
      const moved = await call('PATCH', `/ingestion/schedules/${A.ids.scheduleId}`, { key: A.admin, body: { org_id: B.org, source_id: B.ids.sourceId, dataset_id: B.ids.datasetId, name: 'moved' } });
      if (moved.status !== 400) wrong.push(`PATCH schedule with fields it cannot change: ${moved.status} ${moved.text.slice(0, 200)}`);
      const mine = (await call('GET', `/ingestion/schedules/${A.ids.scheduleId}`, { key: A.admin })).body;
      if (mine.org_id !== A.org || mine.source_id !== A.ids.sourceId || mine.dataset_id !== A.ids.datasetId) wrong.push(`PATCH schedule moved it: ${JSON.stringify(mine)}`);
      const movedSource = await call('PATCH', `/ingestion/sources/${A.ids.sourceId}`, { key: A.admin, body: { org_id: B.org, name: 'moved' } });
      if (movedSource.status < 300 && movedSource.body.org_id !== A.org) wrong.push(`PATCH source moved it: ${movedSource.text}`);
      // The jobs of A filtered by B's dataset are none of B's.
      const filtered = await call('GET', `/ingestion/jobs?dataset_id=${B.ids.datasetId}`, { key: A.admin });
      if (filtered.body.total !== 0) wrong.push(`A lists jobs of B's dataset: ${filtered.text.slice(0, 200)}`);
      // B's secret names are names in A's namespace: A's write makes A's own, B's value stays B's.
      const del = await call('DELETE', `/org-secrets/${B.ids.secretRef}`, { key: A.admin });
      if (del.status !== 404 || del.body.error !== 'not_found') wrong.push(`A deletes B's secret name: ${del.status} ${del.text}`);
      for (const method of ['PUT', 'POST']) {
        const put = await call(method, `/org-secrets/${B.ids.secretRef}`, { key: A.admin, body: BODIES[`${method} /org-secrets/{secretRef}`](A) });
        if (put.status !== 201 && put.status !== 200) wrong.push(`A's own secret of that name: ${put.status} ${put.text}`);
      }
      ok(await call('DELETE', `/org-secrets/${B.ids.secretRef}`, { key: A.admin }), "A's own secret deleted", 204);
      // A's embedding naming B's secret gets no key (B's is never sent on A's behalf).
      const borrow = ok(await call('POST', '/datasets', { key: A.admin, body: { name: `alpha-borrow-${hex(4)}`, embedding: { provider: 'openai', model: 'text-embedding-3-small', secret_ref: 'llm_api_key' } } }), 'A borrowing dataset', 201);
      ok(await call('POST', `/datasets/${borrow.id}/ensure-engine`, { key: A.admin }), 'A borrowing engine');
      const seen = leaky.calls.length;
      const embed = await call('POST', `/datasets/${borrow.id}/embed`, { key: A.admin, body: { text: 'x' } });
      if (embed.status !== 400 || leaky.calls.length !== seen) wrong.push(`A's embedding used a key named like B's: ${embed.status} ${embed.text.slice(0, 200)}`);
      expect(wrong).toEqual([]);
    });

    it("sees none of B's ids in any list or read of its own", async () => {
      const wrong: string[] = [];
      const extra: Record<string, string[]> = { 'GET /ingestion/jobs': [`?dataset_id=${B.ids.datasetId}`], 'GET /connections': ['?provider=atlassian'], 'GET /datasets': ['?limit=200'] };
      for (const r of routes()) {
        if (r.method !== 'GET' || r.auth === 'session') continue;
        if (r.params.some((p) => PARAMS[p] === 'external' || PARAMS[p] === 'capability')) continue;
        for (const q of ['', ...(extra[key(r)] ?? [])]) {
          for (const caller of [A.admin, A.member]) {
            const path = fill(r.path, (p) => A.ids[p]) + q;
            const res = await call('GET', path, { key: r.auth === 'none' ? undefined : caller });
            // The operator's routes (no key: /metrics) label datasets by id; everything else is A's own.
            const shown = bData(res.text, [...namedByA, ...(q ? [B.ids.datasetId] : [])]).filter((v) => r.auth !== 'none' || v === MARK_B);
            if (shown.length) wrong.push(`${path}: shows B's ${shown.join(', ')}`);
          }
        }
        // Positive control: B's own list shows B's resources.
        if (NO_PARAMS[key(r)] === 'list') {
          const mine = await call('GET', r.path, { key: B.admin });
          if (![...B.private, B.ids.secretRef].some((v) => mine.text.includes(v))) wrong.push(`${r.path}: B's own list shows none of B's ids (the check would prove nothing)`);
        }
      }
      expect(wrong).toEqual([]);
    });

    it("the dashboard reads with the caller's own sources only", async () => {
      const bucketName = (await call('GET', `/ingestion/sources/${B.ids.s3Source}`, { key: B.admin })).body.config.bucket;
      const bucket = `s3://${bucketName}/notes.md`;
      const info = ok(await call('GET', `/sources/info?source_path=${encodeURIComponent(bucket)}`, { bearer: A.session }), 'A info');
      expect(info).toMatchObject({ source_id: null, readable: false });
      const batch = ok(await call('POST', '/sources/batch-info', { bearer: A.session, body: { source_paths: [bucket, `gdrive://${B.ids.fileId}`] } }), 'A batch');
      expect(batch.results.map((x: { source_id: string | null }) => x.source_id)).toEqual([null, null]);
      const drive = await call('GET', `/sources/stream/gdrive/${B.ids.fileId}`, { bearer: A.session });
      expect(drive.status).toBe(410);
      expect(drive.body.error).toBe('document_unavailable');
      for (const r of [info, batch, drive.body]) expect(bData(JSON.stringify(r), [bucketName])).toEqual([]);
      // Capabilities: an upload URL altered by one character of its MAC is refused.
      const token = B.ids.uploadToken;
      const altered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      expect((await call('PUT', `/uploads/${altered}`, { raw: new Uint8Array(4), headers: { 'content-type': 'application/vnd.apache.parquet' } })).status).toBe(403);
      // The OAuth callback without a state it knows completes nothing.
      expect((await call('GET', `/connections/callback?state=${hex(24)}&code=${hex(8)}`)).status).toBe(400);
      // B's session token is no key.
      expect((await call('GET', '/datasets', { bearer: B.session })).status).toBe(401);
    });

    it("an organization-wide cleanup of A leaves B's sources", async () => {
      const res = ok(await call('POST', '/ingestion/sources/cleanup', { key: A.member }), 'A cleanup');
      expect(bData(JSON.stringify(res), [])).toEqual([]);
    });

    it('B reads the same before and after everything A tried', async () => {
      const after = await snapshot(B);
      for (const path of Object.keys(before)) expect(after[path], path).toEqual(before[path]);
      // B's secret is still B's value: the upstream gets it when B embeds.
      await call('POST', `/datasets/${B.ids.openaiDataset}/embed`, { key: B.admin, body: { text: 'again' } });
      expect(leaky.calls.at(-1)!.authorization).toBe(`Bearer ${[...SECRETS].find(([, l]) => l === 'org_secret_embedding_key')![0]}`);
    });
  });

  describe('roles', () => {
    it('member keys cannot do admin work, and nothing changes; admin keys can', async () => {
      const admins = routes().filter((r) => r.auth === 'admin');
      expect(admins.map(key)).toContain('PATCH /datasets/{datasetId}/schema');
      for (const r of admins) {
        for (const o of [A, B]) {
          const was = await snapshot(o);
          const res = await call(r.method, fill(r.path, (p) => o.ids[p]), { key: o.member, ...bodyOf(r, o) });
          expect(res.status, `${key(r)} by a member`).toBe(403);
          expect(res.body.error).toBe('insufficient_role');
          expect(await snapshot(o), `${key(r)} by a member changed nothing`).toEqual(was);
        }
        const done = await call(r.method, fill(r.path, (p) => A.ids[p]), { key: A.admin, ...bodyOf(r, A) });
        expect(done.status, `${key(r)} by an admin: ${done.text}`).toBeLessThan(300);
      }
    });
  });

  describe('secrets', () => {
    // What these answers say is searched for secrets with everything else, in the next test.
    it('errors provoked with secrets in play do not echo them', async () => {
      const wrongKey = known('a wrong key', `sable_${hex(32)}`);
      for (const k of [wrongKey, secret('not_a_key'), `Bearer ${wrongKey}`]) {
        const r = await call('GET', '/datasets', { key: k });
        expect(r.status).toBe(401);
      }
      expect((await call('GET', '/sources/info?source_path=s3://x/y', { bearer: `sst_${secret('forged_session')}.${hex(20)}` })).status).toBe(401);
      expect((await call('GET', '/sources/info?source_path=s3://x/y', { key: A.admin })).status).toBe(401);
      // Malformed source configs that carry secrets: refused, naming the field, not the value.
      const s3 = { bucket: 'b', access_key_id: secret('bad_config_access_key'), secret_access_key: secret('bad_config_secret') };
      for (const config of [{ ...s3, max_file_size_mb: 'big' }, { ...s3, unknown_field: secret('bad_config_unknown') }, { ...s3, endpoint: `ftp://${secret('bad_config_endpoint')}` }]) {
        expect((await call('POST', '/ingestion/sources', { key: A.admin, body: { source_type: 's3', name: 'bad', config } })).status).toBe(400);
        expect(ok(await call('POST', '/ingestion/sources/validate', { key: A.admin, body: { source_type: 's3', config } }), 'validate').success).toBe(false);
      }
      expect((await call('POST', '/ingestion/sources', { key: A.admin, body: { source_type: 's3', name: 'bad', config: { ...s3, secret_access_key: 12345 } } })).status).toBe(400);
      // The config is right, the upstream refuses it and quotes the credentials back.
      expect(ok(await call('POST', '/ingestion/sources/validate', { key: A.admin, body: { source_type: 's3', config: { ...s3, endpoint: `${leaky.url}/s3` } } }), 'validate at the upstream').success).toBe(false);
      const patched = await call('PATCH', `/ingestion/sources/${B.ids.s3Source}`, { key: B.admin, body: { config: { bucket: 'b', access_key_id: '********', secret_access_key: secret('bad_patch_secret'), max_file_size_mb: -1 } } });
      expect(patched.status).toBe(400);
      // Bodies that are not JSON, values over the limit, secrets in the wrong place.
      expect((await call('PUT', '/org-secrets/x', { key: A.admin, raw: `{"value": "${secret('broken_json_secret')}"`, headers: { 'content-type': 'application/json' } })).status).toBe(400);
      expect((await call('PUT', '/org-secrets/x', { key: A.admin, body: { value: secret('oversized_secret') + 'x'.repeat(70_000) } })).status).toBe(400);
      expect((await call('PUT', `/org-secrets/${encodeURIComponent('bad ref!')}`, { key: A.admin, body: { value: secret('secret_of_bad_ref') } })).status).toBe(400);
      // A model that fails quoting the deployment's key (A has no organization secret for it).
      const sse = await call('POST', '/intelligence/query', { key: A.admin, body: { query: 'Where are the lamps kept?', dataset_ids: [A.ids.datasetId] } });
      expect(sse.status).toBe(200);
      expect(leaky.calls.some((c) => c.authorization === `Bearer ${llmKey}`)).toBe(true);
      // Every failure path of B above ran with its secrets at the upstream.
      const seen = new Set(leaky.calls.map((c) => c.authorization ?? c.privateToken));
      expect([...seen].some((h) => h?.includes('s3_access_key_id'))).toBe(true);
      expect([...seen].some((h) => h?.startsWith('Basic '))).toBe(true);
      expect([...seen].some((h) => h?.includes('gitlab_access_token'))).toBe(true);
    });

    it('no answer, no line of output and no log file carries a secret', async () => {
      // Every answer B and A read back: jobs and their files, connections, runs and events, sessions.
      for (const o of [A, B]) {
        for (const r of routes()) {
          if (r.method !== 'GET' || r.auth === 'none' || r.auth === 'session') continue;
          if (r.params.some((p) => PARAMS[p] === 'external' || PARAMS[p] === 'capability')) continue;
          await call('GET', fill(r.path, (p) => o.ids[p]), { key: o.admin });
        }
        for (const id of [o.ids.failedJob, o.ids.jobId].filter(Boolean)) await call('GET', `/ingestion/jobs/${id}/files`, { key: o.admin });
        await call('GET', `/intelligence/runs/${o.ids.runId}/events`, { key: o.admin, headers: { accept: 'text/event-stream' } });
      }
      for (const id of [B.ids.refusedConnection, B.ids.failedConnection]) await call('GET', `/connections/${id}`, { key: B.admin });
      const jobs = (await call('GET', '/ingestion/jobs?limit=200', { key: B.admin })).body.jobs;
      for (const j of jobs) await call('GET', `/ingestion/jobs/${j.job_id}/files`, { key: B.admin });
      await call('GET', '/metrics');
      await svc.stop();

      const found: string[] = [];
      let bytes = 0;
      for (const x of http.transcript) {
        const text = `${x.status}\n${x.headers}\n${x.body}`;
        bytes += text.length;
        found.push(...leaks(text, `the answer to ${x.method} ${x.url}`, x.issues));
      }
      const output = svc.stdout() + svc.stderr();
      bytes += output.length;
      found.push(...leaks(output, "the service's output"));
      for (const f of files(dataDir).filter((f) => /\.log$|log\.txt$/i.test(f))) {
        const text = readFileSync(f, 'utf8');
        bytes += text.length;
        found.push(...leaks(text, f));
      }
      expect(found).toEqual([]);
      // The first start says where the admin key is, not what it is.
      expect(svc.stdout()).toContain(join(dataDir, 'admin.key'));
      expect(SECRETS.size).toBeGreaterThan(30);
      expect(bytes).toBeGreaterThan(100_000);
      console.log(`isolation: ${routes().length} routes, ${crossCalls} calls of A naming B's resources; ${SECRETS.size} secrets searched in ${http.transcript.length} answers and the service's output (${bytes} bytes)`);
    });

    it('at rest: API keys are sha256 hashes, every other secret is encrypted', () => {
      const apiKeys = [defaultAdmin, A.admin, A.member, B.admin, B.member];
      // admin.key is where the first start puts the key for its operator: 0600, and nothing else holds it.
      expect(statSync(join(dataDir, 'admin.key')).mode & 0o777).toBe(0o600);
      const data = files(dataDir).filter((f) => f !== join(dataDir, 'admin.key')).map((f) => ({ f, text: readFileSync(f).toString('latin1') }));
      // Positive controls: the records are in what was read, keys under their hash.
      for (const k of apiKeys) expect(data.some((d) => d.text.includes(sha256(k))), 'a key is stored as its sha256').toBe(true);
      for (const id of [B.ids.s3Source, B.ids.connectionId]) expect(data.some((d) => d.text.includes(id)), 'the records holding sealed secrets').toBe(true);
      // Session tokens are never stored; every other secret is sealed (AES-256-GCM).
      expect(data.flatMap((d) => leaks(d.text, d.f, [...TRANSIENT]))).toEqual([]);
    });
  });

  describe('constant-time comparisons', () => {
    const spy = vi.mocked(timingSafeEqual);
    const tmp = () => mkdtempSync(join(dir, 'ct-'));
    /** `value` with its second-to-last character changed: the same length, wrong. */
    const alter = (value: string) => value.slice(0, -2) + (value.at(-2) === 'a' ? 'b' : 'a') + value.at(-1);

    it('session tokens, upload URLs and preview references compare their MAC with timingSafeEqual', async () => {
      const store = new ControlStore(tmp());
      try {
        const master = randomBytes(32);
        const org = await ensureOrg(store, 'ct');
        const { record } = await createKey(store, org.id, 'member');
        const sessions = new SessionTokens(master, store);
        const { token } = sessions.issue({ orgId: org.id, role: 'member', keyId: record.key_id });
        const uploads = UploadSigner.open(tmp());
        const upload = uploads.sign({ key: 'k', contentType: 'text/plain', sizeBytes: 1, expiresAt: Date.now() / 1000 + 60, jobId: 'j', fileId: 'f' });
        const previews = new PreviewSigner(master);
        const preview = previews.sign({ org: org.id, dataset: 'd', document: null, ids: [1] });
        for (const [genuine, verify] of [
          [token, (t: string) => sessions.verify(t)],
          [upload, (t: string) => uploads.verify(t)],
          [preview, (t: string) => previews.open(t)],
        ] as const) {
          spy.mockClear();
          expect(verify(genuine)).toBeTruthy();
          expect(verify(alter(genuine))).toBeFalsy();
          expect(spy).toHaveBeenCalledTimes(2);
          const [x, y] = spy.mock.calls[1];
          expect(x.byteLength).toBe(y.byteLength);
          expect(spy.mock.results[1].value).toBe(false);
        }
      } finally {
        await store.close();
      }
    });

    it('API keys and OAuth states are found by their sha256, never stored or looked up as given', async () => {
      const store = new ControlStore(tmp());
      try {
        const org = await ensureOrg(store, 'ct');
        const { key: k } = await createKey(store, org.id, 'admin');
        expect([...store.keys.getRange()].map((e) => e.key)).toEqual([hashKey(k)]);
        expect(hashKey(k)).toBe(sha256(k));
        expect(lookupKey(store, k)?.org_id).toBe(org.id);
        expect(lookupKey(store, alter(k))).toBeUndefined();

        const connections = new ConnectionStore(store);
        const state = randomBytes(24).toString('base64url');
        const now = new Date().toISOString();
        await connections.put({ id: 'c1', org_id: org.id, provider: 'atlassian', source_type: null, status: 'pending', account_email: null, error: null, scopes: [], tokens: null, pending: { state, verifier: 'v', expires_at: Date.now() + 60_000 }, created_at: now, updated_at: now });
        const states = [...store.root.openDB({ name: 'connection_states' }).getKeys()];
        expect(states).toEqual([sha256(state)]);
        expect(connections.byState(state)?.id).toBe('c1');
        expect(connections.byState(alter(state))).toBeUndefined();
      } finally {
        await store.close();
      }
    });
  });
});

/** Runs `tasks` with at most `n` at once. */
async function inBatches(tasks: (() => Promise<void>)[], n: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < tasks.length) await tasks[next++]();
  }));
}

/** Every file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p) : e.isFile() && statSync(p).size > 0 ? [p] : [];
  });
}
