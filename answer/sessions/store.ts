/**
 * Chat sessions in the control store's LMDB: the session records of each organization, their
 * messages in order and the durable trace of the runs asked in them. Keys:
 *
 *   sessions         [org, session]  -> SessionRecord
 *   session_messages [session, n]    -> MessageRecord (n counts from 0, in order of arrival)
 *   session_events   [session, n]    -> SessionEvent
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'lmdb';
import type { ControlStore } from '../../catalog/store.js';
import type { MessageRole } from '../requests.js';
import type { TraceEvent } from '../runs/run.js';

export interface SessionRecord {
  id: string;
  org_id: string;
  title: string | null;
  workspace_id: string | null;
  dataset_id: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface MessageRecord {
  id: string;
  role: MessageRole;
  content: string;
  metadata: Record<string, unknown>;
  created_at: string;
}

export type SessionEvent = TraceEvent & { run_id: string };

type Key = (string | number)[];

export class SessionStore {
  private readonly sessions: Database<SessionRecord, Key>;
  private readonly messages: Database<MessageRecord, Key>;
  private readonly events: Database<SessionEvent, Key>;

  constructor(private readonly store: ControlStore) {
    this.sessions = store.open('sessions');
    this.messages = store.open('sessionMessages');
    this.events = store.open('sessionEvents');
  }

  get(orgId: string, id: string): SessionRecord | undefined {
    return this.sessions.get([orgId, id]);
  }

  async create(orgId: string, fields: Pick<SessionRecord, 'title' | 'workspace_id' | 'dataset_id' | 'metadata'>): Promise<SessionRecord> {
    const now = new Date().toISOString();
    const record: SessionRecord = { id: randomUUID(), org_id: orgId, ...fields, created_at: now, updated_at: now };
    await this.sessions.put([orgId, record.id], record);
    return record;
  }

  /** The organization's sessions, the most recently active first. */
  list(orgId: string, limit: number): SessionRecord[] {
    const all = [...this.sessions.getRange({ start: [orgId], end: [orgId, '\uffff'] })].map((e) => e.value);
    return all.sort((a, b) => b.updated_at.localeCompare(a.updated_at) || b.id.localeCompare(a.id)).slice(0, limit);
  }

  /** The session, its messages and its events, in one transaction. */
  async remove(orgId: string, id: string): Promise<boolean> {
    return this.store.write(() => {
      if (!this.sessions.get([orgId, id])) return false;
      this.sessions.remove([orgId, id]);
      for (const k of this.messages.getKeys({ start: [id], end: [id, Infinity] })) this.messages.remove(k);
      for (const k of this.events.getKeys({ start: [id], end: [id, Infinity] })) this.events.remove(k);
      return true;
    });
  }

  /**
   * Appends messages and trace events to a session in one transaction (an exchange is stored
   * whole or not at all). Resolves with the stored messages, or null when the session is gone.
   */
  async append(orgId: string, id: string, messages: Omit<MessageRecord, 'id' | 'created_at'>[], events: SessionEvent[] = []): Promise<MessageRecord[] | null> {
    return this.store.write(() => {
      const session = this.sessions.get([orgId, id]);
      if (!session) return null;
      const now = new Date().toISOString();
      let n = this.next(this.messages, id);
      const stored = messages.map((m) => ({ id: randomUUID(), ...m, created_at: now }));
      for (const m of stored) this.messages.put([id, n++], m);
      let e = this.next(this.events, id);
      for (const ev of events) this.events.put([id, e++], ev);
      this.sessions.put([orgId, id], { ...session, updated_at: now });
      return stored;
    });
  }

  /** The last `limit` messages, oldest first. */
  messagesOf(id: string, limit: number): MessageRecord[] {
    const newest = [...this.messages.getRange({ start: [id, Infinity], end: [id], reverse: true, limit })].map((e) => e.value);
    return newest.reverse();
  }

  eventsOf(id: string, limit: number): SessionEvent[] {
    const newest = [...this.events.getRange({ start: [id, Infinity], end: [id], reverse: true, limit })].map((e) => e.value);
    return newest.reverse();
  }

  private next(db: Database<unknown, Key>, id: string): number {
    for (const k of db.getKeys({ start: [id, Infinity], end: [id], reverse: true, limit: 1 })) return (k[1] as number) + 1;
    return 0;
  }
}
