/**
 * Access tokens for Google APIs (gcs, gdrive), whatever the source's auth mode: a service
 * account's key (a JWT signed with its private key, exchanged at the token endpoint: RFC 7523),
 * OAuth credentials (an access token, or a refresh token with its client), a connection, or the
 * deployment's application default credentials. The token endpoint is the deployment's
 * (`SABLE_GOOGLE_TOKEN_URL`), never the one a key file names. Tokens are cached until shortly
 * before they expire. The Google client libraries get the token as an OAuth2Client.
 */
import { createHash, createSign } from 'node:crypto';
import { GoogleAuth, OAuth2Client } from 'google-auth-library';
import type { ConnectionTokens, ConnectorContext } from './connector.js';

export interface GoogleAuthConfig {
  auth_mode: 'service_account' | 'oauth' | 'connection' | 'adc';
  service_account_json?: string;
  oauth_credentials?: { access_token?: string; refresh_token?: string; client_id?: string; client_secret?: string };
  connection_id?: string;
}

const MARGIN_MS = 60_000;

export class GoogleTokens {
  private readonly cache = new Map<string, { token: string; expiresAt: number }>();

  constructor(
    private readonly tokenUrl: string,
    private readonly connections: ConnectionTokens,
  ) {}

  /** An OAuth2Client holding a valid access token for the scopes. */
  async client(ctx: ConnectorContext, c: GoogleAuthConfig, scopes: string[], fresh = false): Promise<OAuth2Client> {
    const client = new OAuth2Client();
    client.setCredentials({ access_token: await this.token(ctx, c, scopes, fresh) });
    return client;
  }

  async token(ctx: ConnectorContext, c: GoogleAuthConfig, scopes: string[], fresh = false): Promise<string> {
    switch (c.auth_mode) {
      case 'connection':
        if (!c.connection_id) throw new Error('auth_mode connection needs connection_id');
        return this.connections.accessToken(ctx.orgId, c.connection_id, ctx.signal, fresh);
      case 'adc': {
        const token = await new GoogleAuth({ scopes }).getAccessToken();
        if (!token) throw new Error("the deployment's application default credentials gave no token");
        return token;
      }
      case 'oauth': {
        const o = c.oauth_credentials ?? {};
        if (o.refresh_token && o.client_id && o.client_secret) {
          return this.cached(`refresh:${createHash('sha256').update(`${o.client_id}\0${o.client_secret}\0${o.refresh_token}`).digest('hex')}`, () => this.exchange({ grant_type: 'refresh_token', refresh_token: o.refresh_token!, client_id: o.client_id!, client_secret: o.client_secret! }));
        }
        if (o.access_token) return o.access_token;
        throw new Error('oauth_credentials needs access_token, or refresh_token with client_id and client_secret');
      }
      default: {
        if (!c.service_account_json) throw new Error('auth_mode service_account needs service_account_json');
        let key: { client_email?: string; private_key?: string };
        try {
          key = JSON.parse(c.service_account_json);
        } catch {
          throw new Error('service_account_json is not JSON (paste the whole key file)');
        }
        if (!key.client_email || !key.private_key) throw new Error('service_account_json lacks client_email or private_key');
        // The key itself is part of the cache key: another key for the same account gets its own token (or its own refusal).
        return this.cached(`sa:${createHash('sha256').update(key.private_key).digest('hex')}:${key.client_email}:${scopes.join(' ')}`, () => this.exchange({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: this.assertion(key.client_email!, key.private_key!, scopes) }));
      }
    }
  }

  private assertion(email: string, privateKey: string, scopes: string[]): string {
    const now = Math.floor(Date.now() / 1000);
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const unsigned = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ iss: email, scope: scopes.join(' '), aud: this.tokenUrl, iat: now, exp: now + 3600 })}`;
    try {
      return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(privateKey).toString('base64url')}`;
    } catch {
      throw new Error("the service account's private_key is not a usable PEM key");
    }
  }

  private async cached(key: string, get: () => Promise<{ token: string; expiresIn: number }>): Promise<string> {
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt - Date.now() > MARGIN_MS) return hit.token;
    const { token, expiresIn } = await get();
    this.cache.set(key, { token, expiresAt: Date.now() + expiresIn * 1000 });
    return token;
  }

  private async exchange(form: Record<string, string>): Promise<{ token: string; expiresIn: number }> {
    const res = await fetch(this.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString(), signal: AbortSignal.timeout(15_000) });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string; error_description?: string };
    if (!res.ok || !body.access_token) throw new Error(`Google refused the credentials (${res.status} ${body.error ?? ''}${body.error_description ? `: ${body.error_description}` : ''})`.replace(' )', ')'));
    return { token: body.access_token, expiresIn: body.expires_in ?? 3600 };
  }
}
