/** API keys: `sable_` + 64 lowercase hex characters; only their sha256 is stored. */
import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { ControlStore, KeyRecord, OrgRecord, Role } from '../../catalog/store.js';

const KEY_FORMAT = /^sable_[0-9a-f]{64}$/;

export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function isKeyFormat(key: string): boolean {
  return KEY_FORMAT.test(key);
}

export async function ensureOrg(store: ControlStore, name: string): Promise<OrgRecord> {
  for (const { value } of store.orgs.getRange()) if (value.name === name) return value;
  const org: OrgRecord = { id: randomUUID(), name, created_at: new Date().toISOString() };
  await store.write(() => {
    // Another process may have created it meanwhile: the check and the put share the transaction.
    for (const { value } of store.orgs.getRange()) if (value.name === name) return;
    store.orgs.put(org.id, org);
  });
  for (const { value } of store.orgs.getRange()) if (value.name === name) return value;
  return org;
}

export async function createKey(store: ControlStore, orgId: string, role: Role): Promise<{ key: string; record: KeyRecord }> {
  const key = `sable_${randomBytes(32).toString('hex')}`;
  const record: KeyRecord = {
    key_id: randomUUID(),
    org_id: orgId,
    role,
    prefix: key.slice(0, 12),
    created_at: new Date().toISOString(),
    revoked_at: null,
  };
  await store.write(() => store.keys.put(hashKey(key), record));
  return { key, record };
}

export function listKeys(store: ControlStore): KeyRecord[] {
  return [...store.keys.getRange()].map((e) => e.value);
}

/** Revokes by key id; resolves false when no such key exists. */
export async function revokeKey(store: ControlStore, keyId: string): Promise<boolean> {
  return store.write(() => {
    for (const { key, value } of store.keys.getRange()) {
      if (value.key_id === keyId) {
        if (!value.revoked_at) store.keys.put(key, { ...value, revoked_at: new Date().toISOString() });
        return true;
      }
    }
    return false;
  });
}

/** The live key record of a presented key, or undefined. */
export function lookupKey(store: ControlStore, presented: string): KeyRecord | undefined {
  if (!isKeyFormat(presented)) return undefined;
  const record = store.keysRead.get(hashKey(presented));
  return record && !record.revoked_at ? record : undefined;
}
