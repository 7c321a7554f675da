/**
 * `preview_ref`: an opaque, signed reference to the chunks a source showed, so a client can fetch
 * the preview later (GET /intelligence/previews/{ref}) without the service handing out storage
 * keys or object URLs. HMAC-SHA256 under a key derived from the organization-secrets key; it
 * names its organization and expires.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export interface PreviewTarget {
  org: string;
  dataset: string;
  document: string | null;
  ids: number[];
}

const LIFETIME_MS = 24 * 3600_000;

export class PreviewSigner {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'sable preview references', 32));
  }

  sign(t: PreviewTarget, now = Date.now()): string {
    const body = Buffer.from(JSON.stringify({ ...t, exp: now + LIFETIME_MS })).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  /** The target, or null when the reference is altered, foreign or expired. */
  open(ref: string, now = Date.now()): (PreviewTarget & { exp: number }) | null {
    const [body, mac] = ref.split('.');
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
