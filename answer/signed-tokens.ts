/**
 * Opaque, signed, expiring tokens that carry their own data: HMAC-SHA256 under a key derived
 * (HKDF) from the organization-secrets key and the token's purpose, so a token of one purpose
 * never opens as another's. Preview references and stream tokens are such tokens.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export class SignedTokens<T extends object> {
  private readonly key: Buffer;

  constructor(
    masterKey: Buffer,
    purpose: string,
    readonly lifetimeMs: number,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), purpose, 32));
  }

  sign(t: T, now = Date.now()): string {
    const body = Buffer.from(JSON.stringify({ ...t, exp: now + this.lifetimeMs })).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  /** What the token carries, or null when it is altered, of another purpose or expired. */
  open(token: string, now = Date.now()): (T & { exp: number }) | null {
    const [body, mac] = token.split('.');
    if (!body || !mac) return null;
    const want = Buffer.from(this.mac(body));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
    try {
      const t = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      return typeof t.exp === 'number' && t.exp > now ? t : null;
    } catch {
      return null;
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
