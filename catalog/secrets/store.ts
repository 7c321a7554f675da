/**
 * Organization secrets (provider credentials) in the control LMDB, encrypted with AES-256-GCM.
 * The org id and secret_ref are the additional authenticated data, so a record copied to another
 * org or ref does not decrypt. Plaintext leaves this file only through reveal().
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import { badRequest } from '../../errors/codes.js';
import type { ControlStore } from '../store.js';

/** An encrypted value: AES-256-GCM under the master key, the org and a context as AAD. */
export interface Sealed {
  v: 1;
  /** Which master key sealed it, so a wrong key is told apart from a tampered record. */
  key_id: string;
  iv: string;
  tag: string;
  ciphertext: string;
}

interface SecretRecord extends Sealed {
  created_at: string;
  updated_at: string;
}

export interface SecretView {
  secret_ref: string;
  created_at: string;
  updated_at: string;
}

export class SecretDecryptError extends Error {}

const REF = /^[A-Za-z0-9_.:\-/]{1,256}$/;
const MAX_VALUE_BYTES = 64 * 1024;

export function checkSecretRef(ref: string): void {
  if (!REF.test(ref)) {
    throw badRequest('secret_ref must be 1 to 256 characters of A-Z a-z 0-9 _ . : - /');
  }
}

function checkValue(value: unknown): asserts value is string {
  // Bytes, not characters: the limit is about what we store.
  if (typeof value !== 'string' || value.length === 0 || Buffer.byteLength(value, 'utf8') > MAX_VALUE_BYTES) {
    throw badRequest(`value must be a non-empty string of at most ${MAX_VALUE_BYTES} bytes`);
  }
}

export class SecretStore {
  /** [org id, secret_ref] -> sealed record */
  readonly db: Database<SecretRecord, [string, string]>;
  private readonly keyId: string;

  constructor(
    private readonly store: ControlStore,
    private readonly masterKey: Buffer,
  ) {
    if (masterKey.length !== 32) throw new Error('the secrets master key must be 32 bytes');
    this.db = store.open('secrets');
    this.keyId = createHmac('sha256', masterKey).update('sable secrets key id').digest('hex').slice(0, 16);
  }

  async put(orgId: string, ref: string, value: string): Promise<{ created: boolean; record: SecretView }> {
    checkSecretRef(ref);
    checkValue(value);
    const sealed = this.seal(orgId, ref, value);
    return this.store.write(() => {
      const now = new Date().toISOString();
      const existing = this.db.get([orgId, ref]);
      const record: SecretRecord = { ...sealed, created_at: existing?.created_at ?? now, updated_at: now };
      this.db.put([orgId, ref], record);
      return { created: existing === undefined, record: view(ref, record) };
    });
  }

  /**
   * Encrypts a value for an organization under a name (`context`): what secret-bearing records
   * elsewhere (source configs) keep instead of the plaintext. Only `open` with the same org and
   * context reads it back.
   */
  seal(orgId: string, context: string, value: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.masterKey, iv);
    cipher.setAAD(aad(orgId, context));
    const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return { v: 1, key_id: this.keyId, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64') };
  }

  /** The plaintext of a sealed value; throws SecretDecryptError when the key, org or context differ. */
  open(orgId: string, context: string, sealed: Sealed): string {
    if (sealed.key_id !== this.keyId) {
      throw new SecretDecryptError(
        `secret '${context}' was encrypted under a different master key (check SABLE_MASTER_KEY or master.key in the data directory)`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.masterKey, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(aad(orgId, context));
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptError(`secret '${context}' does not decrypt: the stored record was altered or belongs to another organization or ref`);
    }
  }

  list(orgId: string): SecretView[] {
    const out: SecretView[] = [];
    for (const { key, value } of this.db.getRange({ start: [orgId], end: [orgId, '\uffff'] })) {
      if (key[0] === orgId) out.push(view(key[1], value));
    }
    return out;
  }

  /** Resolves false when the org has no such secret. */
  delete(orgId: string, ref: string): Promise<boolean> {
    return this.store.write(() => {
      if (this.db.get([orgId, ref]) === undefined) return false;
      this.db.remove([orgId, ref]);
      return true;
    });
  }

  /** The plaintext, for providers calling out server-side; never for an API response. */
  reveal(orgId: string, ref: string): string | undefined {
    const r = this.db.get([orgId, ref]);
    return r === undefined ? undefined : this.open(orgId, ref, r);
  }
}

/** JSON keeps the two parts unambiguous ('a:b' + 'c' differs from 'a' + 'b:c'). */
function aad(orgId: string, ref: string): Buffer {
  return Buffer.from(JSON.stringify(['sable-secret-v1', orgId, ref]), 'utf8');
}

function view(ref: string, r: SecretRecord): SecretView {
  return { secret_ref: ref, created_at: r.created_at, updated_at: r.updated_at };
}
