/**
 * Sources in the control store's LMDB: the record the contract shows, with the secret fields of
 * its config sealed (encrypted with the organization-secrets key; the org and the field's place
 * are the authenticated data, so a sealed value copied elsewhere does not open).
 */
import type { Database } from 'lmdb';
import type { Sealed, SecretStore } from '../../catalog/secrets/store.js';
import type { ControlStore } from '../../catalog/store.js';
import { secretFields, type SourceType } from './types.js';

export interface SourceRecord {
  id: string;
  org_id: string;
  type: SourceType;
  name: string;
  description: string | null;
  /** The normalized config (defaults filled); secret fields hold `{ $sealed }`. */
  config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** What every answer and log line shows instead of a secret. */
export const MASK = '********';

export class SourceStore {
  private readonly db: Database<SourceRecord, string>;

  constructor(
    private readonly store: ControlStore,
    private readonly secrets: SecretStore,
  ) {
    this.db = store.open('sources');
  }

  get(id: string): SourceRecord | undefined {
    return this.db.get(id);
  }

  /** An organization's sources, oldest first. */
  ofOrg(orgId: string): SourceRecord[] {
    return [...this.db.getRange()].map((e) => e.value).filter((s) => s.org_id === orgId).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  async put(record: SourceRecord): Promise<void> {
    await this.store.write(() => void this.db.put(record.id, record));
  }

  async remove(ids: string[]): Promise<void> {
    await this.store.write(() => {
      for (const id of ids) this.db.remove(id);
    });
  }

  /** The config with its secret fields sealed for storage (a field already sealed stays as it is). */
  seal(orgId: string, sourceId: string, type: SourceType, config: Record<string, unknown>): Record<string, unknown> {
    const out = { ...config };
    for (const field of secretFields(type)) {
      const v = out[field];
      if (v === undefined || isSealed(v)) continue;
      const json = typeof v !== 'string';
      out[field] = { $sealed: this.secrets.seal(orgId, context(sourceId, field), json ? JSON.stringify(v) : v), json };
    }
    return out;
  }

  /** The config with its secrets in the clear: for connectors, server side only. */
  reveal(record: SourceRecord): Record<string, unknown> {
    const out = { ...record.config };
    for (const field of secretFields(record.type)) {
      const v = out[field];
      if (!isSealed(v)) continue;
      const plain = this.secrets.open(record.org_id, context(record.id, field), v.$sealed);
      out[field] = v.json ? JSON.parse(plain) : plain;
    }
    return out;
  }
}

/** The config as answers show it: every secret field present is ********. */
export function masked(type: SourceType, config: Record<string, unknown>): Record<string, unknown> {
  const out = { ...config };
  for (const field of secretFields(type)) if (out[field] !== undefined) out[field] = MASK;
  return out;
}

export function isSealed(v: unknown): v is { $sealed: Sealed; json: boolean } {
  return typeof v === 'object' && v !== null && '$sealed' in v;
}

function context(sourceId: string, field: string): string {
  return `source:${sourceId}:${field}`;
}

