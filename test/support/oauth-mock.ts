// A local OAuth server (oauth2-mock-server: authorization code with PKCE, refresh, revocation)
// on 127.0.0.1 whose userinfo names one account, for the suites that connect through it.
import { OAuth2Server } from 'oauth2-mock-server';

export async function startOAuthMock(email: string): Promise<OAuth2Server> {
  const oauth = new OAuth2Server();
  await oauth.issuer.keys.generate('RS256');
  await oauth.start(0, '127.0.0.1');
  oauth.service.on('beforeUserinfo', (res: { body: Record<string, unknown> }) => {
    res.body = { sub: email.split('@')[0], email };
  });
  return oauth;
}
