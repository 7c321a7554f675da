/**
 * Shares one read among the callers that wait for it, without giving any caller a read older
 * than its call: a caller that arrives while a read is in flight waits for the next one, which
 * starts when that one ends and serves every caller that arrived meanwhile. So there is at most
 * one read in flight and one queued, however many callers (the catalog's read barrier, the shard
 * map every search and write reads).
 */
export class Coalesced<T> {
  private inFlight: Promise<T> | null = null;
  private queued: Promise<T> | null = null;

  constructor(private readonly read: () => Promise<T>) {}

  /** A read that began after this call. */
  next(): Promise<T> {
    if (this.queued) return this.queued;
    const begin = (): Promise<T> => {
      this.queued = null;
      const run = this.read();
      this.inFlight = run;
      void run.catch(() => {}).finally(() => {
        if (this.inFlight === run) this.inFlight = null;
      });
      return run;
    };
    if (!this.inFlight) return begin();
    return (this.queued = this.inFlight.catch(() => {}).then(begin));
  }
}
