/**
 * Dashboard session tokens: `POST /auth/sessions` with an API key gives a token that stands for
 * that key on the dashboard routes only, for an hour. The token is HMAC-signed (a key derived
 * from the organization-secrets key) and names the API key it came from, so revoking the key ends
 * its sessions at once. Signing out ends one token: its signature is kept (in control.mdb, so a
 * restart does not bring it back) until the hour it had left is over.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from 'lmdb';
import type { ControlStore } from '../../catalog/store.js';
import type { Caller } from '../http/router.js';

const PREFIX = 'sst_';
const LIFETIME_MS = 3600_000;

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
}

export interface IssuedSession {
  token: string;
  expires_at: string;
  /** What the key may do, so a page can show only what it allows. */
  role: Caller['role'];
  org_id: string;
}

interface Claims {
  o: string;
  r: Caller['role'];
  k: string;
  e: number;
  /** Random: two sessions of one key opened in the same millisecond are two tokens, ended apart. */
  n: string;
}

export class SessionTokens {
  private readonly key: Buffer;
  /** Signature of an ended token -> when it would have expired (ms). */
  private readonly ended: Database<number, string>;

  constructor(
    masterKey: Buffer,
    private readonly store: ControlStore,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'sable dashboard sessions', 32));
    this.ended = store.open('endedDashboardSessions');
  }

  issue(caller: Caller): IssuedSession {
    const exp = Date.now() + LIFETIME_MS;
    const claims: Claims = { o: caller.orgId, r: caller.role, k: caller.keyId, e: exp, n: randomBytes(12).toString('base64url') };
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return { token: `${PREFIX}${body}.${this.mac(body)}`, expires_at: new Date(exp).toISOString(), role: caller.role, org_id: caller.orgId };
  }

  /** Ends a valid token for good (sign-out); forgets the tokens that have expired meanwhile. */
  async end(token: string): Promise<void> {
    const parsed = this.parse(token);
    if (!parsed) return;
    const now = Date.now();
    await this.store.write(() => {
      for (const { key, value } of this.ended.getRange()) if (value < now) void this.ended.remove(key);
      void this.ended.put(parsed.mac, parsed.claims.e);
    });
  }

  /** The caller a token stands for, or undefined (altered, expired, ended, or its key revoked). */
  verify(token: string): Caller | undefined {
    const parsed = this.parse(token);
    if (!parsed || this.ended.get(parsed.mac) !== undefined) return undefined;
    const { claims } = parsed;
    const live = [...this.store.keys.getRange()].some((e) => e.value.key_id === claims.k && !e.value.revoked_at);
    return live ? { orgId: claims.o, role: claims.r, keyId: claims.k } : undefined;
  }

  /** A token's claims and signature when this service signed it and it has not expired. */
  private parse(token: string): { claims: Claims; mac: string } | undefined {
    if (!token.startsWith(PREFIX)) return undefined;
    const [body, mac] = token.slice(PREFIX.length).split('.');
    if (!body || !mac) return undefined;
    const want = Buffer.from(this.mac(body));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
    let claims: Claims;
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    return claims.e < Date.now() ? undefined : { claims, mac };
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
