/**
 * The OAuth providers a connection can be made with, as the deployment configures them (client id
 * and secret, endpoints: configurable, so tests and private deployments point them elsewhere), and
 * the scopes each source type needs. Google sends refresh tokens with access_type=offline and
 * prompt=consent; Atlassian with the offline_access scope, for the api.atlassian.com audience.
 */
export const PROVIDERS = ['google', 'atlassian'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface ProviderSettings {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
  /** RFC 7009 revocation endpoint; null when the provider has none (the grant is then only forgotten). */
  revokeUrl: string | null;
}

export const DEFAULT_ENDPOINTS: Record<Provider, Omit<ProviderSettings, 'clientId' | 'clientSecret'>> = {
  google: {
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    revokeUrl: 'https://oauth2.googleapis.com/revoke',
  },
  atlassian: {
    authorizeUrl: 'https://auth.atlassian.com/authorize',
    tokenUrl: 'https://auth.atlassian.com/oauth/token',
    userinfoUrl: 'https://api.atlassian.com/me',
    revokeUrl: null,
  },
};

const SCOPES: Record<Provider, Record<string, string[]>> = {
  google: {
    gdrive: ['https://www.googleapis.com/auth/drive.readonly'],
    gcs: ['https://www.googleapis.com/auth/devstorage.read_only'],
  },
  atlassian: {
    jira: ['read:jira-work', 'read:jira-user'],
    confluence: ['read:confluence-content.all', 'read:confluence-space.summary', 'read:page:confluence', 'read:space:confluence', 'read:attachment:confluence'],
  },
};

/** Whether a provider's grants can read sources of a type. */
export function serves(provider: Provider, sourceType: string): boolean {
  return Object.hasOwn(SCOPES[provider], sourceType);
}

export function scopesFor(provider: Provider, sourceType: string | null): string[] {
  const byType = SCOPES[provider];
  const wanted = sourceType ? byType[sourceType] : Object.values(byType).flat();
  return provider === 'google' ? ['openid', 'email', ...wanted] : ['read:me', 'offline_access', ...wanted];
}

/** Query parameters a provider needs beyond the standard ones to hand out a refresh token. */
export function extraAuthorizeParams(provider: Provider): Record<string, string> {
  return provider === 'google' ? { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' } : { audience: 'api.atlassian.com', prompt: 'consent' };
}
