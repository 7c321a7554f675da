/**
 * Dashboard session tokens: `POST /auth/sessions` with an API key gives a token that stands for
 * that key on the dashboard routes only, for an hour. The token is HMAC-signed (a key derived
 * from the organization-secrets key) and names the API key it came from, so revoking the key ends
 * its sessions at once.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { ControlStore } from '../../catalog/store.js';
import type { Caller } from '../http/router.js';

const PREFIX = 'sst_';
const LIFETIME_MS = 3600_000;

export class SessionTokens {
  private readonly key: Buffer;

  constructor(
    masterKey: Buffer,
    private readonly store: ControlStore,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'sable dashboard sessions', 32));
  }

  issue(caller: Caller): { token: string; expires_at: string } {
    const exp = Date.now() + LIFETIME_MS;
    const body = Buffer.from(JSON.stringify({ o: caller.orgId, r: caller.role, k: caller.keyId, e: exp })).toString('base64url');
    return { token: `${PREFIX}${body}.${this.mac(body)}`, expires_at: new Date(exp).toISOString() };
  }

  /** The caller a token stands for, or undefined (altered, expired, or its key revoked). */
  verify(token: string): Caller | undefined {
    if (!token.startsWith(PREFIX)) return undefined;
    const [body, mac] = token.slice(PREFIX.length).split('.');
    if (!body || !mac) return undefined;
    const want = Buffer.from(this.mac(body));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
    let claims: { o: string; r: Caller['role']; k: string; e: number };
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (claims.e < Date.now()) return undefined;
    const live = [...this.store.keys.getRange()].some((e) => e.value.key_id === claims.k && !e.value.revoked_at);
    return live ? { orgId: claims.o, role: claims.r, keyId: claims.k } : undefined;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
