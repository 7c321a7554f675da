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

/**
 * The `default` organization and an admin key, when the catalog holds no key yet: the check and
 * the puts share one transaction, so two nodes of a cluster starting at once make one key.
 * Answers the key, or undefined when there was one already.
 */
export async function firstAdmin(store: ControlStore): Promise<string | undefined> {
  const key = `sable_${randomBytes(32).toString('hex')}`;
  const now = new Date().toISOString();
  return store.write(() => {
    if (store.keys.getKeysCount() > 0) return undefined;
    let org: OrgRecord | undefined;
    for (const { value } of store.orgs.getRange()) if (value.name === 'default') org = value;
    if (!org) store.orgs.put((org = { id: randomUUID(), name: 'default', created_at: now }).id, org);
    store.keys.put(hashKey(key), { key_id: randomUUID(), org_id: org.id, role: 'admin', prefix: key.slice(0, 12), created_at: now, revoked_at: null });
    return key;
  });
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
