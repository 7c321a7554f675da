/**
 * The 32-byte master key that encrypts organization secrets: from the config (SABLE_MASTER_KEY)
 * when given, else `master.key` in the data directory, created 0600 on first start.
 */
import { configError } from '../../errors/codes.js';
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const HEX = /^[0-9a-fA-F]{64}$/;
// 32 bytes are 43 base64 characters plus one '=' of padding; url-safe alphabet accepted too.
const BASE64 = /^[A-Za-z0-9+/_-]{43}=?$/;

/** 64 hex characters or the base64 of 32 bytes; undefined for anything else. */
export function parseMasterKey(raw: string): Buffer | undefined {
  const s = raw.trim();
  if (HEX.test(s)) return Buffer.from(s, 'hex');
  if (BASE64.test(s)) {
    const key = Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64');
    if (key.length === 32) return key;
  }
  return undefined;
}

export function loadMasterKey(dataDir: string, fromConfig: string | undefined): Buffer {
  // An empty SABLE_MASTER_KEY is an error, not "unset": falling back to a key file would
  // silently encrypt under a different key than the operator meant.
  if (fromConfig !== undefined) {
    const key = parseMasterKey(fromConfig);
    // The message never echoes the value: it is the key, or close to it.
    if (!key) {
      throw configError(
        `SABLE_MASTER_KEY must be 64 hex characters or the base64 of 32 bytes (got ${fromConfig.trim().length} characters)`,
      );
    }
    return key;
  }
  const file = join(dataDir, 'master.key');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    createKeyFile(dataDir, file);
    text = readFileSync(file, 'utf8');
  }
  const key = parseMasterKey(text);
  if (!key) throw configError(`${file} does not hold a master key (64 hex characters or the base64 of 32 bytes)`);
  return key;
}

/**
 * Written to a temporary file and hard-linked into place: the link fails if another process
 * (`sable` CLI and service on one directory) won the race, and no reader sees a partial file.
 * Hex text, so the same key can be moved to SABLE_MASTER_KEY as is.
 */
function createKeyFile(dataDir: string, file: string): void {
  mkdirSync(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  try {
    linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    unlinkSync(tmp);
  }
}
