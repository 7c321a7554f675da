/**
 * Self-authenticating upload tokens for the local object store: the upload's terms (key,
 * content type, size, expiry) in the token, with an HMAC-SHA256 under a key kept in the data
 * directory, so a URL cannot be altered or outlive its hour, and survives restarts.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UploadTarget } from './object-store.js';

export class UploadSigner {
  private constructor(private readonly key: Buffer) {}

  /** The key file `upload.key` of the data directory, created on first use (mode 0600). */
  static open(dataDir: string): UploadSigner {
    const file = join(dataDir, 'upload.key');
    if (!existsSync(file)) {
      writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
      chmodSync(file, 0o600);
    }
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
    if (key.length < 16) throw new Error(`${file} does not hold an upload signing key`);
    return new UploadSigner(key);
  }

  sign(target: UploadTarget): string {
    const payload = Buffer.from(JSON.stringify(target)).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The terms of a genuine token (expired or not), or null. */
  verify(token: string): UploadTarget | null {
    const dot = token.indexOf('.');
    if (dot <= 0) return null;
    const payload = token.slice(0, dot);
    // Compared as text: base64url's last character carries padding bits, so decoding first would
    // let a few altered spellings of the same MAC through.
    const given = Buffer.from(token.slice(dot + 1));
    const wanted = Buffer.from(this.mac(payload));
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return null;
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as UploadTarget;
    } catch {
      return null;
    }
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
