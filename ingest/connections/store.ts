/**
 * Connection records in the control store's LMDB: a stored OAuth grant of an organization, its
 * tokens sealed under the organization-secrets key (never answered), and while consent is pending
 * the PKCE verifier and the state that the callback finds it by.
 *
 *   connections       [org, id]       -> ConnectionRecord
 *   connection_states [sha256(state)] -> [org, id]
 *
 * States are found by their hash, as API keys are: a lookup by the state itself would compare it,
 * a secret the callback presents, byte by byte against stored ones (timing).
 */
import { createHash } from 'node:crypto';
import type { Database } from 'lmdb';
import type { Sealed } from '../../catalog/secrets/store.js';
import type { ControlStore } from '../../catalog/store.js';
import type { Provider } from './providers.js';

export const CONNECTION_STATUSES = ['pending', 'connected', 'error', 'revoked'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

export interface ConnectionRecord {
  id: string;
  org_id: string;
  provider: Provider;
  source_type: string | null;
  status: ConnectionStatus;
  account_email: string | null;
  /** Why the connection is in `error` (shown by the API, and by the runs of sources using it). */
  error: string | null;
  scopes: string[];
  /** The grant: {access_token, refresh_token, expires_at}, sealed. */
  tokens: Sealed | null;
  pending: { state: string; verifier: string; expires_at: number } | null;
  created_at: string;
  updated_at: string;
}

export class ConnectionStore {
  private readonly db: Database<ConnectionRecord, string[]>;
  private readonly states: Database<string[], string>;

  constructor(private readonly store: ControlStore) {
    this.db = store.open('connections');
    this.states = store.open('connectionStates');
  }

  get(orgId: string, id: string): ConnectionRecord | undefined {
    return this.db.get([orgId, id]);
  }

  byState(state: string): ConnectionRecord | undefined {
    const key = this.states.get(stateKey(state));
    return key ? this.db.get(key) : undefined;
  }

  list(orgId: string): ConnectionRecord[] {
    return [...this.db.getRange({ start: [orgId], end: [orgId, '\uffff'] })].map((e) => e.value).sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async put(c: ConnectionRecord, previousState?: string | null): Promise<void> {
    await this.store.write(() => {
      this.db.put([c.org_id, c.id], { ...c, updated_at: new Date().toISOString() });
      if (previousState && previousState !== c.pending?.state) this.states.remove(stateKey(previousState));
      if (c.pending) this.states.put(stateKey(c.pending.state), [c.org_id, c.id]);
    });
  }

  async remove(c: ConnectionRecord): Promise<void> {
    await this.store.write(() => {
      this.db.remove([c.org_id, c.id]);
      if (c.pending) this.states.remove(stateKey(c.pending.state));
    });
  }
}

function stateKey(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}
