/**
 * One LISTEN connection per node, shared by everything that waits on PostgreSQL notifications
 * (the catalog log, shard tailers, run events). NOTIFY needs a session of its own, outside the
 * pool (a pooled connection LISTENs for whoever holds it next), and one per channel would cost a
 * backend per shard replica. A notification is only a wake-up: delivery is at commit, not
 * replayed after a reconnect, so every subscriber also polls; after a reconnect each is woken
 * once, since what was notified while the connection was down is lost.
 */
import pg from 'pg';

type Handler = (payload: string) => void;

export class Notifications {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private readonly handlers = new Map<string, Set<Handler>>();
  private closed = false;

  constructor(private readonly url: string) {}

  /** Calls `handler` with each payload sent on `channel`; the returned function unsubscribes. */
  async subscribe(channel: string, handler: Handler): Promise<() => void> {
    let set = this.handlers.get(channel);
    const fresh = !set;
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    if (fresh && this.client) await this.client.query(`LISTEN "${channel}"`).catch(() => this.drop());
    else await this.connect();
    return () => {
      set.delete(handler);
      if (set.size > 0 || this.handlers.get(channel) !== set) return;
      this.handlers.delete(channel);
      void this.client?.query(`UNLISTEN "${channel}"`).catch(() => {});
    };
  }

  /** Reopens the connection when it broke (subscribers call it from their polls). */
  connect(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => {});
  }

  private async open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'sable-listen', connectionTimeoutMillis: 5000 });
    client.on('error', () => {
      if (this.client === client) this.drop();
    });
    client.on('notification', (msg) => {
      for (const h of this.handlers.get(msg.channel) ?? []) h(msg.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN "${channel}"`);
    } catch {
      await client.end().catch(() => {});
      return; // the database away: the next connect() (a subscriber's poll) tries again
    }
    if (this.closed) return void (await client.end().catch(() => {}));
    this.client = client;
    // Whatever was notified while no connection listened is lost: every subscriber looks now.
    for (const set of this.handlers.values()) for (const h of set) h('');
  }

  private drop(): void {
    const c = this.client;
    this.client = null;
    void c?.end().catch(() => {});
  }
}
