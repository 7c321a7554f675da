/**
 * The shard replicas a search node hosts (design: ../shared/design/cluster.md §3.2 "Replica
 * states", §3.5): for each replica the controller placed here, an embedded engine dataset
 * (`{dataset}:s{shard}`) fed from the shard's log by a LogTailer, joined to the in-sync set once
 * it has applied the log's head, and dropped when the controller moves it away.
 *
 * A replica starts from its shard's newest snapshot in object storage (cluster/shard-snapshots.ts)
 * and applies the log after it; with none yet, from the log's first entry. A node's disk is a
 * cache that a restart rebuilds. The replica the shard's HRW order puts first among the in-sync
 * ones takes the next snapshot, every `snapshotEntries` log entries or `snapshotIntervalMs`, and
 * the log is cut behind the second-newest. A node that cannot renew its lease stops answering
 * (self-fencing): its searches and sync waits fail with vecstack_router_failed, and the router
 * asks another replica.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DatasetRecord } from '../catalog/datasets/record.js';
import { engineTuning } from '../catalog/datasets/service.js';
import { SableError } from '../errors/codes.js';
import type { AdvancedFilter, Dataset, DatasetStats, Engine, PromotionPolicy, Receipt, ShardRunner, SlaStatus, TuningInEffect } from '../engine/index.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Pool } from '../outbound/postgres/pool.js';
import { engineRows } from '../retrieval/rows.js';
import type { ShardHit, ShardSearch } from '../retrieval/sharded.js';
import type { RowsAnswer, RowsQuery } from './replica-wire.js';
import type { Heartbeat } from './membership.js';
import type { Notifications } from './notifications.js';
import { hrwScore } from './placement.js';
import { joinIsr, replicasOfNode, reportApplied, shardMap, type NodeReplica } from './replica-state.js';
import { applyEntry, decodeEntry, LogTailer, type LogEntry } from './shard-log.js';
import { exportRows, importRows, newestSnapshot, recordSnapshot, snapshotKey, type SnapshotRow } from './shard-snapshots.js';

export interface ShardHostOptions {
  pool: Pool;
  notifications: Notifications;
  nodeId: string;
  engine: Engine;
  runner: ShardRunner;
  heartbeat: Heartbeat;
  /** The dataset's record in this node's catalog copy. */
  record: (datasetId: string) => DatasetRecord | undefined;
  /** Resolves once this node's catalog copy has applied `seq` (a caller's newer settings). */
  catalogAt: (seq: number) => Promise<void>;
  /** How often the node's assignments are read (and applied seqs reported). */
  intervalMs: number;
  /** Where snapshots go and come from. */
  objects: ObjectStore;
  /** A local directory for snapshot files on their way to and from object storage. */
  stagingDir: string;
  /** A shard's snapshot owner takes one once this many log entries passed the newest... */
  snapshotEntries: number;
  /** ...or once this long passed with at least one entry. */
  snapshotIntervalMs: number;
}

/** What the last snapshot this node took cost, for /healthz and the bench. */
export interface SnapshotTaken {
  dataset: string;
  shard: number;
  seq: number;
  rows: number;
  bytes: number;
  /** How long the replica applied nothing while its rows were written out. */
  heldMs: number;
  /** Export, upload and record. */
  totalMs: number;
  /** Log entries deleted behind the second-newest snapshot. */
  cutEntries: number;
}

/** How long a failed snapshot (object storage away) waits before the next try. */
const SNAPSHOT_RETRY_MS = 5000;
/** Tries of a bulk entry's object before the replica gives up and starts again (about 3 minutes). */
const STORED_ENTRY_ATTEMPTS = 40;
/** How often a replica that cannot be hosted says so again. */
const HOST_FAILURE_LOG_MS = 30_000;

/** What a delete removed, by seq, kept for the writer's sync call to read. */
const REMEMBERED_RESULTS = 4096;

class HostedReplica {
  reported = -1;
  /** The last seq applied to the engine dataset, as seen from inside `hold` (the tailer's own count moves after). */
  heldSeq: number;
  /** The newest snapshot of the shard known here, and when it was taken (or the replica hosted). */
  snapshotSeq: number;
  snapshotAt = Date.now();
  nextSnapshotTry = 0;
  private chain: Promise<unknown> = Promise.resolve();
  /** What of the record the engine dataset holds, per kind of setting (each is costly to apply again). */
  applied: { schema: number; defaults: string; promotion: string; sla: string };
  readonly results = new Map<number, number>();

  constructor(
    readonly dataset: string,
    readonly shard: number,
    readonly engineDataset: Dataset,
    readonly tailer: LogTailer,
    record: DatasetRecord,
    public state: NodeReplica['state'],
    fromSeq: number,
  ) {
    this.heldSeq = fromSeq;
    this.snapshotSeq = fromSeq;
    this.applied = { schema: record.schema_version, defaults: defaultsOf(record), promotion: JSON.stringify(record.promotion ?? null), sla: JSON.stringify(record.sla ?? null) };
  }

  /** Runs `fn` with nothing else held: entries are applied one at a time, and a snapshot sees none half-applied. */
  hold<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => {});
    return next;
  }

  remember(seq: number, result: number): void {
    this.results.set(seq, result);
    if (this.results.size > REMEMBERED_RESULTS) this.results.delete(this.results.keys().next().value!);
  }
}

function defaultsOf(record: DatasetRecord): string {
  return JSON.stringify([record.index_type, record.tuning]);
}

export function replicaName(dataset: string, shard: number): string {
  return `${dataset}:s${shard}`;
}

export class ShardHost {
  private readonly replicas = new Map<string, HostedReplica>();
  private timer: NodeJS.Timeout | null = null;
  private passing: Promise<void> | null = null;
  private stopped = false;
  private snapshotting: Promise<void> | null = null;
  private readonly hostFailuresLogged = new Map<string, number>();
  /** The error of the last pass (the database away), for /healthz and logs. */
  lastError: Error | null = null;
  /** The last snapshot this node took. */
  lastSnapshot: SnapshotTaken | null = null;

  constructor(private readonly opts: ShardHostOptions) {}

  /** Drops replica datasets a previous run left (the log rebuilds them), then follows assignments. */
  async start(): Promise<void> {
    for (const ds of this.opts.engine.listDatasets()) if (/:s\d+$/.test(ds.name)) await this.opts.engine.dropDataset(ds.name);
    await this.pass().catch((e) => (this.lastError = e as Error));
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.passing?.catch(() => {});
    await this.snapshotting;
    await Promise.all([...this.replicas.values()].map((r) => r.tailer.stop()));
  }

  /** One pass now (tests, and a router's nudge after it created a dataset). */
  nudge(): Promise<void> {
    return this.pass();
  }

  /** Replicas hosted here and their states, for /healthz and tests. */
  list(): { dataset: string; shard: number; state: string; applied: number; snapshot_seq: number }[] {
    return [...this.replicas.values()].map((r) => ({ dataset: r.dataset, shard: r.shard, state: r.state, applied: r.tailer.applied, snapshot_seq: r.snapshotSeq }));
  }

  /** Waits until the replica applied `seq`: the writer's ack (and what a delete removed). */
  async sync(dataset: string, shard: number, seq: number, timeoutMs: number): Promise<{ applied: number; result: number | null }> {
    const r = this.serving(dataset, shard);
    await r.tailer.waitFor(seq, timeoutMs).catch((e: Error) => {
      throw new SableError('vecstack_router_failed', `replica ${replicaName(dataset, shard)} on ${this.opts.nodeId} did not apply seq ${seq}: ${e.message}`);
    });
    this.serving(dataset, shard); // fenced meanwhile: not an ack
    return { applied: r.tailer.applied, result: r.results.get(seq) ?? null };
  }

  /** The shard's best hits, once the replica applied `minSeq` (the router's read-your-writes). */
  async search(dataset: string, shard: number, minSeq: number, req: ShardSearch, waitMs: number): Promise<{ hits: ShardHit[]; applied: number; receipt: Receipt | null }> {
    const r = this.serving(dataset, shard);
    await this.caughtUp(r, minSeq, waitMs);
    const ds = r.engineDataset;
    const options = {
      topK: req.topK,
      nprobe: req.nprobe,
      rerankDepth: req.rerankDepth,
      filters: req.filters,
      advancedFilters: req.advancedFilters,
      includeMetadata: req.includeMetadata,
    };
    const { hits, receipt } = req.keyword
      ? await ds.hybridSearch(req.query, req.keyword.text, { ...options, alpha: req.keyword.alpha, pool: true }, this.opts.runner)
      : await ds.searchDetailed(req.query!, options, this.opts.runner);
    const out: ShardHit[] = req.includeVectors ? hits.map((h) => ({ ...h, vector: ds.getVector(h.id) ?? new Float32Array(0) })) : hits;
    return { hits: out, applied: r.tailer.applied, receipt };
  }

  /** One vector's metadata (and values), once the replica applied `minSeq`. */
  async point(dataset: string, shard: number, minSeq: number, id: number, withVector: boolean, waitMs: number) {
    const r = this.serving(dataset, shard);
    await this.caughtUp(r, minSeq, waitMs);
    const metadata = r.engineDataset.getMetadata(id);
    if (metadata === undefined) return undefined;
    return { metadata, ...(withVector ? { vector: r.engineDataset.getVector(id) ?? new Float32Array(0) } : {}) };
  }

  /** The answer tools' reads of the replica's rows (retrieval/rows.ts), once it applied `minSeq`. */
  async rows(dataset: string, shard: number, minSeq: number, waitMs: number, q: RowsQuery): Promise<RowsAnswer> {
    const r = this.serving(dataset, shard);
    await this.caughtUp(r, minSeq, waitMs);
    const rows = engineRows(r.engineDataset);
    const ids = Float64Array.from(q.ids ?? []);
    const advanced = q.advanced_filters as AdvancedFilter[] | undefined;
    switch (q.op) {
      case 'describe':
        return rows.describe(q.max_values ?? 200);
      case 'admits':
        return { admits: Array.from(await rows.admits(ids, q.filters, advanced)) };
      case 'matching': {
        const m = await rows.matching(q.filters, advanced, q.limit ?? 100_000);
        return { ids: Array.from(m.ids), truncated: m.truncated };
      }
      case 'metadata':
        return { metadata: (await rows.metadata(ids)).map((m) => m ?? null) };
    }
  }

  /** The replica's engine statistics. */
  async stats(dataset: string, shard: number): Promise<DatasetStats> {
    return this.serving(dataset, shard).engineDataset.stats();
  }

  /** The index tuning in effect in the replica (it follows the replica's rows until set). */
  async tuning(dataset: string, shard: number): Promise<TuningInEffect> {
    return this.serving(dataset, shard).engineDataset.tuning();
  }

  /** Starts a rebuild of the replica's index; its statistics the moment it started. */
  async rebuild(dataset: string, shard: number): Promise<DatasetStats> {
    const r = this.serving(dataset, shard);
    void r.engineDataset.rebuild().catch((e) => console.error(`sable: index rebuild of ${replicaName(dataset, shard)} failed:`, e));
    return r.engineDataset.stats();
  }

  /** Applies the record's settings now (a settings change answers once they hold); the policy and SLA state after. */
  async settings(dataset: string, shard: number, catalogSeq: number): Promise<{ promotion: PromotionPolicy; sla: SlaStatus }> {
    const r = this.serving(dataset, shard);
    // The caller changed the record through its node: this copy applies that change first.
    await this.opts.catalogAt(catalogSeq);
    const record = this.opts.record(dataset);
    if (record) await this.applyRecord(r, record);
    return { promotion: r.engineDataset.promotionPolicy, sla: r.engineDataset.sla };
  }

  /**
   * What changed of the record's schema, defaults, promotion policy and SLA, into the replica's
   * engine dataset (a record changes at every write that observes metadata: most passes find
   * nothing to do).
   */
  private async applyRecord(r: HostedReplica, record: DatasetRecord): Promise<void> {
    const ds = r.engineDataset;
    const now = { schema: record.schema_version, defaults: defaultsOf(record), promotion: JSON.stringify(record.promotion ?? null), sla: JSON.stringify(record.sla ?? null) };
    if (now.schema !== r.applied.schema) await ds.setColumnTypes(Object.fromEntries(record.schema.map((f) => [f.name, f.type])));
    if (now.defaults !== r.applied.defaults) await ds.setDefaults({ indexType: record.index_type, tuning: engineTuning(record.tuning) });
    if (now.promotion !== r.applied.promotion && record.promotion) await ds.setPromotionPolicy(record.promotion);
    if (now.sla !== r.applied.sla && record.sla) await ds.setSla(record.sla);
    r.applied = now;
  }

  private async caughtUp(r: HostedReplica, minSeq: number, waitMs: number): Promise<void> {
    if (r.tailer.applied >= minSeq) return;
    await r.tailer.waitFor(minSeq, waitMs).catch(() => {
      throw new SableError('vecstack_router_failed', `replica ${replicaName(r.dataset, r.shard)} on ${this.opts.nodeId} is behind seq ${minSeq} (at ${r.tailer.applied})`);
    });
  }

  /** The replica when this node may answer for it: hosted, in the in-sync set, lease held. */
  private serving(dataset: string, shard: number): HostedReplica {
    const r = this.replicas.get(replicaName(dataset, shard));
    if (!r) throw new SableError('vecstack_router_failed', `node ${this.opts.nodeId} hosts no replica of shard ${shard} of dataset ${dataset}`);
    if (!this.opts.heartbeat.serving()) throw new SableError('vecstack_router_failed', `node ${this.opts.nodeId} lost its lease: it serves nothing until it renews`);
    if (r.tailer.error) throw new SableError('vecstack_router_failed', `replica ${replicaName(dataset, shard)} on ${this.opts.nodeId} stopped: ${r.tailer.error.message}`);
    return r;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.pass()
        .catch((e) => (this.lastError = e as Error))
        .finally(() => this.schedule());
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  /** Passes never overlap: a nudge during a timed pass waits for it, then runs its own. */
  private pass(): Promise<void> {
    const run = async () => {
      await this.reconcile();
      this.lastError = null;
    };
    const next = (this.passing ?? Promise.resolve()).catch(() => {}).then(run);
    this.passing = next;
    return next;
  }

  private async reconcile(): Promise<void> {
    const { pool, nodeId } = this.opts;
    const assigned = await replicasOfNode(pool, nodeId);
    const wanted = new Set<string>();
    let failed: Error | null = null;
    for (const a of assigned) {
      const name = replicaName(a.dataset, a.shard);
      const record = this.opts.record(a.dataset);
      if (!record) continue; // the catalog copy has not seen the dataset yet (or it was deleted)
      wanted.add(name);
      let hosted = this.replicas.get(name);
      if (hosted?.tailer.error) {
        // A gap (the log was cut past it while this node was away) or an entry it could not apply:
        // it starts again from the newest snapshot.
        console.error(`sable: replica ${name} on ${nodeId} starts again: ${hosted.tailer.error.message}`);
        await this.unhost(name, hosted);
        hosted = undefined;
      }
      if (!hosted) {
        try {
          hosted = await this.host(a, record);
          this.hostFailuresLogged.delete(name);
        } catch (err) {
          // Object storage away, say: this replica waits for the next pass, the others go on.
          failed = err as Error;
          this.logHostFailure(name, failed);
          continue;
        }
      }
      hosted.state = a.state;
      await this.applyRecord(hosted, record);
      const applied = hosted.tailer.applied;
      if (a.state === 'initializing' || a.state === 'stale') {
        const joined = await joinIsr(pool, a.dataset, a.shard, nodeId, applied);
        if (joined.joined) hosted.state = 'active';
        // Joined: the next pass reports its vectors with its seq (for /metrics).
        hosted.reported = joined.joined ? -1 : applied;
      } else if (applied !== hosted.reported) {
        await reportApplied(pool, a.dataset, a.shard, nodeId, applied, hosted.engineDataset.stats().vector_count);
        hosted.reported = applied;
      }
      this.considerSnapshot(hosted);
    }
    for (const [name, hosted] of this.replicas) if (!wanted.has(name)) await this.unhost(name, hosted);
    if (failed) throw failed;
  }

  /**
   * A bulk entry's body, from object storage. Entries apply in order, so one that cannot be read
   * is tried again (object storage away) until it is read or the tailer stops; the replica falls
   * behind meanwhile, and the writers' acks demote it.
   */
  private async storedEntry(key: string, stopped: () => boolean): Promise<LogEntry> {
    for (let attempt = 1; ; attempt++) {
      try {
        const staged = await this.opts.objects.stage(key);
        try {
          return decodeEntry(await readFile(staged.path));
        } finally {
          await staged.release();
        }
      } catch (err) {
        if (stopped() || attempt >= STORED_ENTRY_ATTEMPTS) throw new Error(`bulk entry ${key} could not be read: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, Math.min(5000, 250 * attempt)));
      }
    }
  }

  /** Says why a replica cannot be hosted: once, then every HOST_FAILURE_LOG_MS while it lasts. */
  private logHostFailure(name: string, err: Error): void {
    const last = this.hostFailuresLogged.get(name) ?? 0;
    if (Date.now() - last < HOST_FAILURE_LOG_MS) return;
    this.hostFailuresLogged.set(name, Date.now());
    console.error(`sable: ${err.message} (tried again at each pass)`);
  }

  private async unhost(name: string, hosted: HostedReplica): Promise<void> {
    this.replicas.delete(name);
    await hosted.tailer.stop();
    await hosted.hold(async () => {}); // a snapshot of it being written finishes first
    await this.opts.engine.dropDataset(name);
  }

  /** Starts a snapshot of the replica when one is due and none is being taken here; never waits for it. */
  private considerSnapshot(r: HostedReplica): void {
    if (this.snapshotting || this.stopped || r.state !== 'active' || Date.now() < r.nextSnapshotTry) return;
    const since = r.heldSeq - r.snapshotSeq;
    if (since <= 0 || (since < this.opts.snapshotEntries && Date.now() - r.snapshotAt < this.opts.snapshotIntervalMs)) return;
    this.snapshotting = this.snapshot(r)
      .catch((err: Error) => {
        r.nextSnapshotTry = Date.now() + SNAPSHOT_RETRY_MS;
        console.error(`sable: snapshot of ${replicaName(r.dataset, r.shard)} on ${this.opts.nodeId} failed (retried in ${SNAPSHOT_RETRY_MS} ms): ${err.message}`);
      })
      .finally(() => (this.snapshotting = null));
  }

  /** The first in-sync replica in the shard's HRW order takes its snapshots: one writer, no coordination. */
  private async ownsSnapshots(r: HostedReplica): Promise<boolean> {
    const entry = (await shardMap(this.opts.pool, r.dataset)).find((e) => e.shard === r.shard);
    const owner = entry?.replicas
      .filter((x) => x.state === 'active' && x.live)
      .map((x) => x.node)
      .sort((a, b) => hrwScore(r.dataset, r.shard, b) - hrwScore(r.dataset, r.shard, a) || (a < b ? -1 : 1))[0];
    return owner === this.opts.nodeId;
  }

  private async snapshot(r: HostedReplica): Promise<void> {
    const { pool, objects, nodeId, stagingDir } = this.opts;
    const newest = await newestSnapshot(pool, r.dataset, r.shard);
    if (newest && newest.seq > r.snapshotSeq) {
      // Another owner took one (before placement moved): the count starts from it.
      r.snapshotSeq = newest.seq;
      r.snapshotAt = Date.now();
      return;
    }
    if (!(await this.ownsSnapshots(r))) {
      r.nextSnapshotTry = Date.now() + this.opts.intervalMs * 5;
      return;
    }
    await mkdir(stagingDir, { recursive: true });
    const path = join(stagingDir, `snapshot-${randomUUID()}`);
    try {
      const started = performance.now();
      let heldMs = 0;
      const { seq, exported } = await r.hold(async () => {
        const t = performance.now();
        const seq = r.heldSeq;
        const exported = await exportRows(r.engineDataset, path, r.dataset, r.shard, seq);
        heldMs = performance.now() - t;
        return { seq, exported };
      });
      const key = snapshotKey(r.dataset, r.shard, seq);
      // Multipart above 64 MiB, parts retried on their own; the sha256 in the row checks the whole.
      await objects.putFile(key, path, exported.bytes, 'application/octet-stream');
      const row: SnapshotRow = { dataset: r.dataset, shard: r.shard, seq, key, ...exported, node: nodeId };
      const recorded = await recordSnapshot(pool, row).catch(async (err: Error) => {
        await objects.remove(key).catch(() => {}); // the dataset was dropped meanwhile, say
        throw err;
      });
      if (!recorded.recorded) await objects.remove(key).catch(() => {});
      // An object left behind by a failed removal is garbage, never read: no row names it.
      for (const gone of recorded.removedKeys) await objects.remove(gone).catch(() => {});
      r.snapshotSeq = seq;
      r.snapshotAt = Date.now();
      this.lastSnapshot = { dataset: r.dataset, shard: r.shard, seq, rows: exported.rows, bytes: exported.bytes, heldMs, totalMs: performance.now() - started, cutEntries: recorded.cutEntries };
    } finally {
      await rm(path, { force: true });
    }
  }

  private async host(a: NodeReplica, record: DatasetRecord): Promise<HostedReplica> {
    const name = replicaName(a.dataset, a.shard);
    // Whatever a dropped replica left is stale: it is rebuilt from the snapshot and the log.
    await this.opts.engine.dropDataset(name);
    const engineDataset = await this.opts.engine.createDataset({
      name,
      dim: record.dim,
      metric: record.metric,
      indexType: record.index_type,
      tuning: engineTuning(record.tuning),
      schema: record.schema.map((e) => ({ name: e.name, type: e.type })),
      ...(record.promotion ? { promotion: record.promotion } : {}),
      ...(record.sla ? { sla: record.sla } : {}),
    });
    let fromSeq = 0;
    try {
      const snapshot = await newestSnapshot(this.opts.pool, a.dataset, a.shard);
      if (snapshot) {
        const staged = await this.opts.objects.stage(snapshot.key);
        try {
          await importRows(staged.path, engineDataset, snapshot);
        } finally {
          await staged.release();
        }
        fromSeq = snapshot.seq;
      }
    } catch (err) {
      await this.opts.engine.dropDataset(name);
      throw new Error(`replica ${name} on ${this.opts.nodeId} could not load its snapshot: ${(err as Error).message}`);
    }
    let hosted: HostedReplica | undefined;
    const tailer = new LogTailer({
      pool: this.opts.pool,
      notifications: this.opts.notifications,
      dataset: a.dataset,
      shard: a.shard,
      fromSeq,
      apply: (rec) =>
        hosted!.hold(async () => {
          const entry = rec.entry ?? (await this.storedEntry(rec.blobKey!, () => tailer.halted));
          const result = await applyEntry(engineDataset, entry);
          hosted!.heldSeq = rec.seq;
          hosted!.remember(rec.seq, result);
        }),
      pollMs: 1000,
    });
    hosted = new HostedReplica(a.dataset, a.shard, engineDataset, tailer, record, a.state, fromSeq);
    this.replicas.set(name, hosted);
    return hosted;
  }
}
