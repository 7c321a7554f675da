/**
 * Connections: OAuth grants an organization stores once and sources use by `connection_id`.
 * `create` starts the authorization-code flow with PKCE (S256) and a state; the provider sends
 * the browser back to the callback, which exchanges the code, reads the account's email and
 * stores the tokens sealed. Sources get an access token through `accessToken`, refreshed before
 * each run (and whenever it is about to expire) with the rotated refresh token stored; a refresh
 * the provider refuses moves the connection to `error` with the reason, which the source's run
 * then fails with. `remove` revokes the grant at the provider and deletes it.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SecretStore } from '../../catalog/secrets/store.js';
import { badRequest, SableError } from '../../errors/codes.js';
import { redact } from '../../outbound/messages.js';
import type { ConnectionTokens } from '../connectors/connector.js';
import { extraAuthorizeParams, scopesFor, type Provider, type ProviderSettings } from './providers.js';
import type { ConnectionRecord, ConnectionStore } from './store.js';

export interface ConnectionSettings {
  providers: Partial<Record<Provider, ProviderSettings>>;
  /** Where the provider sends the browser back: {public url}/connections/callback. */
  callbackUrl: () => string;
  /**
   * Runs `fn` while no other process refreshes the same connection, with the connection's record
   * as the other processes left it (cluster mode: a PostgreSQL advisory lock, then the catalog
   * copy brought to the head). Without it, refreshes are one at a time in this process only.
   */
  exclusive?: <T>(key: string, fn: () => Promise<T>) => Promise<T>;
}

interface Grant {
  access_token: string;
  refresh_token: string | null;
  expires_at: number;
}

const CONSENT_WINDOW_MS = 15 * 60_000;
/** Form fields of token, refresh and revocation requests that hold secrets. */
const SECRET_FORM_FIELDS = ['code', 'code_verifier', 'client_secret', 'refresh_token', 'token'];
/** A token this close to its expiry is refreshed before it is handed out. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const TIMEOUT_MS = 15_000;

export class ConnectionService implements ConnectionTokens {
  private readonly refreshing = new Map<string, Promise<string>>();

  constructor(
    private readonly store: ConnectionStore,
    private readonly secrets: SecretStore,
    private readonly settings: ConnectionSettings,
  ) {}

  async create(orgId: string, provider: Provider, sourceType: string | null) {
    const p = this.provider(provider);
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(24).toString('base64url');
    const now = new Date().toISOString();
    const c: ConnectionRecord = {
      id: randomUUID(),
      org_id: orgId,
      provider,
      source_type: sourceType,
      status: 'pending',
      account_email: null,
      error: null,
      scopes: scopesFor(provider, sourceType),
      tokens: null,
      pending: { state, verifier, expires_at: Date.now() + CONSENT_WINDOW_MS },
      created_at: now,
      updated_at: now,
    };
    await this.store.put(c);
    const url = new URL(p.authorizeUrl);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: p.clientId,
      redirect_uri: this.settings.callbackUrl(),
      scope: c.scopes.join(' '),
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...extraAuthorizeParams(provider),
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return { ...view(c), authorization_url: url.href };
  }

  list(orgId: string, provider: string | null) {
    if (provider !== null && provider !== 'google' && provider !== 'atlassian') throw badRequest(`provider must be google or atlassian (got '${provider}')`);
    return { connections: this.store.list(orgId).filter((c) => provider === null || c.provider === provider).map(view) };
  }

  get(orgId: string, id: string) {
    return view(this.find(orgId, id));
  }

  /** Revokes the grant at the provider (when it has an endpoint for it), then deletes the connection. */
  async remove(orgId: string, id: string): Promise<void> {
    const c = this.find(orgId, id);
    const p = this.settings.providers[c.provider];
    if (c.tokens && p?.revokeUrl) {
      const grant = this.grant(c);
      const token = grant.refresh_token ?? grant.access_token;
      try {
        await this.post(p.revokeUrl, { token, client_id: p.clientId, client_secret: p.clientSecret });
      } catch (e) {
        // The grant is forgotten either way; the provider's answer is for the log.
        console.error(`sable: connection ${id}: the provider did not confirm the revocation: ${(e as Error).message}`);
      }
    }
    await this.store.remove(c);
  }

  /** The browser's return from the provider's consent page: what the page the user sees says. */
  async callback(query: URLSearchParams): Promise<{ ok: boolean; message: string }> {
    const state = query.get('state');
    const c = state ? this.store.byState(state) : undefined;
    if (!c || !c.pending) return { ok: false, message: 'This link is unknown or was already used. Start the connection again.' };
    const previous = c.pending.state;
    const fail = async (reason: string) => {
      await this.store.put({ ...c, status: 'error', error: reason, pending: null }, previous);
      return { ok: false, message: reason };
    };
    if (Date.now() > c.pending.expires_at) return fail('the consent took longer than 15 minutes: create a new connection');
    const denied = query.get('error');
    if (denied) return fail(`the provider answered ${denied}${query.get('error_description') ? `: ${query.get('error_description')}` : ''}`);
    const code = query.get('code');
    if (!code) return fail('the provider sent no authorization code');
    const p = this.provider(c.provider);
    try {
      const answer = await this.post(p.tokenUrl, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: this.settings.callbackUrl(),
        client_id: p.clientId,
        client_secret: p.clientSecret,
        code_verifier: c.pending.verifier,
      });
      const grant = grantOf(answer, null);
      const email = await this.email(p, grant.access_token);
      await this.store.put({ ...c, status: 'connected', error: null, account_email: email, tokens: this.seal(c, grant), pending: null }, previous);
      return { ok: true, message: `Connected${email ? ` as ${email}` : ''}. You can close this window.` };
    } catch (e) {
      return fail(`the code could not be exchanged for tokens: ${(e as Error).message}`);
    }
  }

  /** A valid access token of a connected connection; `fresh` refreshes it first (the start of a run). */
  accessToken(orgId: string, id: string, _signal?: AbortSignal, fresh = false): Promise<string> {
    const c = this.store.get(orgId, id);
    if (!c) return Promise.reject(new Error(`connection ${id} does not exist (it was deleted?)`));
    if (c.status !== 'connected' || !c.tokens) return Promise.reject(new Error(`connection ${id} is ${c.status}${c.error ? `: ${c.error}` : ''}`));
    const grant = this.grant(c);
    if (!fresh && grant.expires_at - Date.now() > REFRESH_MARGIN_MS) return Promise.resolve(grant.access_token);
    // One refresh at a time per connection: a rotated refresh token is good once.
    let running = this.refreshing.get(id);
    if (!running) {
      running = this.refreshOnce(orgId, id, grant).finally(() => this.refreshing.delete(id));
      this.refreshing.set(id, running);
    }
    return running;
  }

  /**
   * Refreshes the grant `seen`, unless another process did meanwhile (across a cluster's nodes the
   * refresh is single-flight too): then its new token is the answer, and its rotated refresh token
   * is not spent twice.
   */
  private refreshOnce(orgId: string, id: string, seen: Grant): Promise<string> {
    const run = async () => {
      const c = this.store.get(orgId, id);
      if (!c || c.status !== 'connected' || !c.tokens) throw new Error(`connection ${id} is ${c?.status ?? 'gone'}${c?.error ? `: ${c.error}` : ''}`);
      const now = this.grant(c);
      if (now.access_token !== seen.access_token && now.expires_at - Date.now() > REFRESH_MARGIN_MS) return now.access_token;
      return this.refresh(c);
    };
    return this.settings.exclusive ? this.settings.exclusive(`connection:${id}`, run) : run();
  }

  /** The tokens of a connection's grant (none without one): what errors of its sources must not repeat. */
  secretsOf(orgId: string, id: string): string[] {
    const c = this.store.get(orgId, id);
    if (!c?.tokens) return [];
    const grant = this.grant(c);
    return grant.refresh_token ? [grant.access_token, grant.refresh_token] : [grant.access_token];
  }

  private async refresh(c: ConnectionRecord): Promise<string> {
    const grant = this.grant(c);
    const p = this.provider(c.provider);
    if (!grant.refresh_token) {
      if (grant.expires_at > Date.now()) return grant.access_token;
      const reason = 'the access token expired and the provider gave no refresh token: connect again';
      await this.store.put({ ...c, status: 'error', error: reason });
      throw new Error(`connection ${c.id} is error: ${reason}`);
    }
    let answer: Record<string, unknown>;
    try {
      answer = await this.post(p.tokenUrl, { grant_type: 'refresh_token', refresh_token: grant.refresh_token, client_id: p.clientId, client_secret: p.clientSecret });
    } catch (e) {
      const reason = `the provider refused to refresh the grant: ${(e as Error).message}`;
      await this.store.put({ ...(this.store.get(c.org_id, c.id) ?? c), status: 'error', error: reason });
      throw new Error(`connection ${c.id} is error: ${reason}`);
    }
    const next = grantOf(answer, grant.refresh_token);
    await this.store.put({ ...(this.store.get(c.org_id, c.id) ?? c), tokens: this.seal(c, next), error: null });
    return next.access_token;
  }

  private find(orgId: string, id: string): ConnectionRecord {
    const c = this.store.get(orgId, id);
    if (!c) throw new SableError('connection_not_found', `connection ${id} was not found`);
    return c;
  }

  private provider(provider: Provider): ProviderSettings {
    const p = this.settings.providers[provider];
    if (!p) {
      const name = provider.toUpperCase();
      throw badRequest(`this service has no ${provider} OAuth client: set SABLE_${name}_CLIENT_ID and SABLE_${name}_CLIENT_SECRET`);
    }
    return p;
  }

  private grant(c: ConnectionRecord): Grant {
    return JSON.parse(this.secrets.open(c.org_id, `connection:${c.id}`, c.tokens!)) as Grant;
  }

  private seal(c: ConnectionRecord, grant: Grant) {
    return this.secrets.seal(c.org_id, `connection:${c.id}`, JSON.stringify(grant));
  }

  private async email(p: ProviderSettings, accessToken: string): Promise<string | null> {
    const res = await fetch(p.userinfoUrl, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!res.ok) return null;
    const body = (await res.json()) as { email?: unknown };
    return typeof body.email === 'string' ? body.email : null;
  }

  /** A form POST to a provider endpoint (RFC 6749 section 4.1.3); its JSON answer, or its error in words. */
  private async post(url: string, form: Record<string, string>): Promise<Record<string, unknown>> {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      // A non-JSON answer is described by its status.
    }
    if (!res.ok) {
      const said = `${res.status} ${typeof body.error === 'string' ? body.error : ''}${typeof body.error_description === 'string' ? ` (${body.error_description})` : ''}`.trim();
      // A provider may quote the request in its refusal: the message is kept on the connection,
      // shown by the API and logged, so the secrets sent are cut out of it.
      throw new Error(SECRET_FORM_FIELDS.reduce((m, f) => ((form[f]?.length ?? 0) >= 6 ? redact(m, form[f]) : m), said));
    }
    return body;
  }
}

function grantOf(answer: Record<string, unknown>, previousRefresh: string | null): Grant {
  if (typeof answer.access_token !== 'string') throw new Error('the provider answered without an access token');
  const expiresIn = typeof answer.expires_in === 'number' ? answer.expires_in : 3600;
  return { access_token: answer.access_token, refresh_token: typeof answer.refresh_token === 'string' ? answer.refresh_token : previousRefresh, expires_at: Date.now() + expiresIn * 1000 };
}

/** A connection as the API shows it: never a token, never the PKCE verifier. */
export function view(c: ConnectionRecord) {
  return { id: c.id, provider: c.provider, source_type: c.source_type, status: c.status, account_email: c.account_email, error: c.error, scopes: c.scopes, created_at: c.created_at, updated_at: c.updated_at };
}
