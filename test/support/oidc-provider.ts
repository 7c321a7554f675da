// A local OpenID provider (oidc-provider) with real login and consent pages, for the browser
// tests of the Google connection flow: client `sable` (secret `sable-secret`, sent
// client_secret_post, PKCE required), accounts `<id>@acme.test`, refresh tokens and revocation.
import type { Server } from 'node:http';
import Provider from 'oidc-provider';

export const OIDC_CLIENT_SECRET = 'sable-secret';

/** The service's settings that point its Google connections at `issuer`. */
export function googleFlagsFor(issuer: string): Record<string, string> {
  return { 'google-client-id': 'sable', 'google-authorize-url': `${issuer}/auth`, 'google-token-url': `${issuer}/token`, 'google-userinfo-url': `${issuer}/me`, 'google-revoke-url': `${issuer}/token/revocation` };
}

/** Serves the provider at `issuer` on `server`, for a service whose base URL is `serviceUrl`. */
export function serveOidcProvider(server: Server, issuer: string, serviceUrl: string): void {
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'sable', client_secret: OIDC_CLIENT_SECRET, redirect_uris: [`${serviceUrl}/connections/callback`], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_post' }],
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, email: `${id}@acme.test` }) }),
    claims: { openid: ['sub'], email: ['email'] },
    scopes: ['openid', 'email', 'offline_access', 'https://www.googleapis.com/auth/drive.readonly'],
    pkce: { required: () => true },
    issueRefreshToken: async () => true,
    features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
    // The devInteractions pages want a secure cookie only behind TLS.
    cookies: { keys: ['a-test-cookie-key'] },
  });
  server.on('request', provider.callback());
}
