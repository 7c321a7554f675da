/**
 * The runs of the last 15 minutes, by organization: a run id is unique within its organization
 * only (callers choose them), and another organization's run is not found. A run is the work of
 * this process and lives in its memory; each is also recorded as it goes (`remote`: on this
 * machine's disk, or in a cluster in PostgreSQL), where the runs this process does not hold are
 * found: an earlier process's, or another node's.
 */
import { randomUUID } from 'node:crypto';
import { SableError } from '../../errors/codes.js';
import { Run } from './run.js';
import type { RemoteRuns, RunView } from './run-view.js';

export const RUN_RETENTION_MS = 15 * 60_000;

export interface RunStoreOptions {
  /** How long a run whose listeners all left keeps working, waiting for one to re-attach. */
  detachGraceMs: number;
  /** Runs of one organization working at once; one more is refused (429). */
  maxRunningPerOrg: number;
  /** Runs kept in all (the oldest ended ones go first). */
  maxKept?: number;
  /** Where runs are recorded, and found when not in memory (local-run-log.ts, or a cluster's run log). */
  remote?: RemoteRuns;
}

export class RunStore {
  private readonly runs = new Map<string, Run>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: RunStoreOptions) {
    this.sweeper = setInterval(() => this.sweep(), 30_000);
    this.sweeper.unref();
  }

  get(orgId: string, id: string): Run | undefined {
    const run = this.runs.get(key(orgId, id));
    if (run && this.expired(run, Date.now())) {
      this.runs.delete(key(orgId, id));
      return undefined;
    }
    return run;
  }

  /** A run of this process, or in a cluster of another node; undefined when there is none. */
  async lookup(orgId: string, id: string): Promise<RunView | undefined> {
    return this.get(orgId, id) ?? (await this.opts.remote?.find(orgId, id));
  }

  async find(orgId: string, id: string): Promise<RunView> {
    const run = await this.lookup(orgId, id);
    if (!run) throw new SableError('run_not_found', `run ${id} was not found (runs are kept ${RUN_RETENTION_MS / 60_000} minutes)`);
    return run;
  }

  create(orgId: string, query: string, id: string = randomUUID()): Run {
    let running = 0;
    for (const r of this.runs.values()) if (r.orgId === orgId && r.running) running++;
    if (running >= this.opts.maxRunningPerOrg) {
      throw new SableError('rate_limited', `${running} questions of this organization are being answered; retry when one ends`, { retryAfterSeconds: 1 });
    }
    const run = new Run(id, orgId, query, this.opts.detachGraceMs);
    this.runs.set(key(orgId, id), run);
    this.opts.remote?.track(run);
    this.sweep();
    return run;
  }

  /** Stops every running run (the service is closing) and waits for them to end. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const running = [...this.runs.values()].filter((r) => r.running);
    for (const r of running) r.abort.abort(new Error('the service is stopping'));
    await Promise.all(running.map((r) => r.whenEnded()));
    await this.opts.remote?.close?.();
  }

  private expired(run: Run, now: number): boolean {
    return run.endedAt !== null && now - run.endedAt > RUN_RETENTION_MS;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, r] of this.runs) if (this.expired(r, now)) this.runs.delete(k);
    const max = this.opts.maxKept ?? 10_000;
    if (this.runs.size <= max) return;
    const ended = [...this.runs.entries()].filter(([, r]) => !r.running).sort((a, b) => a[1].endedAt! - b[1].endedAt!);
    for (const [k] of ended.slice(0, this.runs.size - max)) this.runs.delete(k);
  }
}

function key(orgId: string, id: string): string {
  return `${orgId}\u0000${id}`;
}
