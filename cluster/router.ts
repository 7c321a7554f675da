/**
 * The router of cluster mode (design: ../shared/design/cluster.md §3.3, §3.4): retrieval's port
 * of sharded vectors over the shard logs and the replicas that apply them.
 *
 * A write reads the shard map, refuses before writing anything when a touched shard has too few
 * in-sync replicas for the write concern (Kafka's min.insync.replicas, Elasticsearch's
 * wait_for_active_shards), appends one entry per touched shard in one PostgreSQL transaction,
 * then asks every in-sync replica of those shards to apply it and counts the acks:
 *
 * | concern | acks needed per shard          | a replica that does not ack in time |
 * | default | every in-sync replica, >= 1    | demoted out of the in-sync set      |
 * | one     | 1                              | kept                                |
 * | quorum  | floor(R / 2) + 1 of R assigned | kept                                |
 * | all     | R                              | kept                                |
 *
 * So with `default` every replica that serves reads has applied an acknowledged delete. A 503
 * after the append means the write is durable in the log but not applied widely enough yet: a
 * retry of the request is safe (upserts and deletes by id are idempotent).
 *
 * A search reads the shard map with each shard's head (one query), asks one in-sync replica per
 * shard for its top k once it has applied that head (so an acknowledged write is visible to
 * every search that starts after it, on any router), tries the next replica when one fails, and
 * merges by score. A shard with no replica that answers fails the search: 503
 * vecstack_router_failed, never a silent partial answer.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { DatasetRecord } from '../catalog/datasets/record.js';
import { shardOf } from '../catalog/placement/shard-of.js';
import { SableError } from '../errors/codes.js';
import { fuse, type DatasetStats, type Metadata, type PromotionPolicy, type Receipt, type SlaStatus, type TuningInEffect } from '../engine/index.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Pool } from '../outbound/postgres/pool.js';
import type { DatasetColumns, DatasetRows } from '../retrieval/rows.js';
import type { ShardedVectors, ShardHit, ShardSearch, WriteConcern } from '../retrieval/sharded.js';
import type { RowsQuery } from './replica-wire.js';
import { Coalesced } from './coalesced.js';
import { HttpReplica, type ReplicaCalls } from './replica-client.js';
import { clusterDataset, demote, shardMap, type ClusterDatasetSettings, type ShardMapEntry, type ShardReplica } from './replica-state.js';
import { appendParts, datasetTag, encodeEntry, splitByShard, type LogEntry, type LogPart } from './shard-log.js';

export interface ClusterRouterOptions {
  pool: Pool;
  nodeId: string;
  secret: string;
  /** How long a write waits for its replicas' acks. */
  ackTimeoutMs: number;
  /** How long a replica may wait to reach the head a search asks for. */
  readWaitMs?: number;
  /** This node's replicas, called without HTTP. */
  local?: ReplicaCalls;
  /**
   * Brings this node's catalog copy up to the log's head and answers its seq: what every replica
   * applies before it reads the dataset's settings (a change made through any node is seen).
   */
  catalogHead: () => Promise<number>;
  /** Where a bulk load's batches go, the log holding only their keys. */
  objects: ObjectStore;
}

export class ClusterRouter implements ShardedVectors {
  private readonly settingsCache = new Map<string, ClusterDatasetSettings>();
  private readonly remotes = new Map<string, HttpReplica>();
  private readonly mapReads = new Map<string, Coalesced<ShardMapEntry[]>>();

  constructor(private readonly opts: ClusterRouterOptions) {}

  async upsert(r: DatasetRecord, ids: number[], values: Float32Array, metadata: Metadata[]): Promise<void> {
    await this.write(r, { op: 'upsert', ids: Float64Array.from(ids), vectors: values, dim: r.dim, metadata }, 'default');
  }

  /**
   * A bulk load's batch, as typed arrays (no copy into plain arrays). Each shard's part is an
   * object in storage and the log holds its key: a billion rows loaded do not pass through
   * PostgreSQL (design §3.3).
   */
  async upsertRows(r: DatasetRecord, ids: Float64Array, vectors: Float32Array, metadata: Metadata[] | undefined): Promise<void> {
    await this.write(r, { op: 'upsert', ids, vectors, dim: r.dim, ...(metadata ? { metadata } : {}) }, 'default', true);
  }

  async delete(r: DatasetRecord, ids: number[], writeConcern: WriteConcern): Promise<number> {
    return this.write(r, { op: 'delete', ids: Float64Array.from(ids) }, writeConcern);
  }

  async search(r: DatasetRecord, request: ShardSearch): Promise<{ hits: ShardHit[]; receipt: Receipt | null }> {
    const map = await this.map(r);
    const readWait = this.opts.readWaitMs ?? 1000;
    const perShard = await Promise.all(map.map((entry) => this.onReplica(r, entry, (calls) => calls.search(r.id, entry.shard, entry.lastSeq, request, readWait))));
    const all = perShard.flatMap((a) => a.hits);
    const receipt = mergeReceipts(perShard.map((a) => a.receipt));
    if (request.keyword) return { hits: fuseShards(all, request.query ? request.keyword.alpha : 0, request.topK), receipt };
    all.sort((a, b) => a.score - b.score || a.id - b.id);
    return { hits: all.slice(0, request.topK), receipt };
  }

  async point(r: DatasetRecord, id: number, withVector: boolean) {
    const settings = await this.settings(r);
    const shard = shardOf(id, settings.shards);
    const entry = (await this.map(r)).find((e) => e.shard === shard)!;
    return this.onReplica(r, entry, (calls) => calls.point(r.id, shard, entry.lastSeq, id, withVector, this.opts.readWaitMs ?? 1000));
  }

  /** Every shard's statistics from one in-sync replica, summed (a dataset is the union of its shards). */
  async stats(r: DatasetRecord): Promise<DatasetStats> {
    const map = await this.map(r);
    return mergeStats(r, await Promise.all(map.map((e) => this.onReplica(r, e, (calls) => calls.stats(r.id, e.shard)))));
  }

  /**
   * The index tuning in effect: each shard's follows its own rows until set, and a search probes
   * each shard by its own; the dataset's is the largest of each value over the shards.
   */
  async tuning(r: DatasetRecord): Promise<TuningInEffect> {
    const map = await this.map(r);
    const per = await Promise.all(map.map((e) => this.onReplica(r, e, (calls) => calls.tuning(r.id, e.shard))));
    return { nlist: Math.max(...per.map((t) => t.nlist)), nprobe_min: Math.max(...per.map((t) => t.nprobe_min)), nprobe_max: Math.max(...per.map((t) => t.nprobe_max)) };
  }

  /** The dataset's rows for the answer tools: every shard's, merged (retrieval/rows.ts). */
  rows(r: DatasetRecord): DatasetRows {
    const waitMs = this.opts.readWaitMs ?? 1000;
    const ask = async (q: RowsQuery, only?: number) => {
      const map = await this.map(r);
      const shards = only === undefined ? map : map.filter((e) => e.shard === only);
      return Promise.all(shards.map(async (e) => ({ shard: e.shard, answer: await this.onReplica(r, e, (calls) => calls.rows(r.id, e.shard, e.lastSeq, waitMs, q)) })));
    };
    /** The ids split by shard, each with its positions in `ids`. */
    const byShard = async (ids: Float64Array) => {
      const shards = (await this.settings(r)).shards;
      const groups = new Map<number, number[]>();
      ids.forEach((id, k) => {
        const s = shardOf(id, shards);
        (groups.get(s) ?? groups.set(s, []).get(s)!).push(k);
      });
      return groups;
    };
    return {
      describe: async (maxValues) => {
        const parts = (await ask({ op: 'describe', max_values: maxValues })).map((p) => p.answer as DatasetColumns);
        const columnTypes: DatasetColumns['columnTypes'] = {};
        const values: DatasetColumns['values'] = {};
        for (const part of parts) {
          for (const [name, type] of Object.entries(part.columnTypes)) columnTypes[name] ??= type;
          for (const [name, vs] of Object.entries(part.values)) {
            // A column small in every shard may be large in all of them together.
            const merged = vs === null || values[name] === null ? null : [...new Set([...(values[name] ?? []), ...vs])].sort();
            values[name] = merged !== null && merged.length <= maxValues ? merged : null;
          }
        }
        return { columnTypes, values, vectorCount: sum(parts, (p) => p.vectorCount) };
      },
      admits: async (ids, filters, advancedFilters) => {
        const out = new Uint8Array(ids.length);
        await Promise.all(
          [...(await byShard(ids))].map(async ([shard, positions]) => {
            const [{ answer }] = await ask({ op: 'admits', ids: positions.map((k) => ids[k]!), ...(filters ? { filters } : {}), ...(advancedFilters ? { advanced_filters: advancedFilters } : {}) }, shard);
            (answer as { admits: number[] }).admits.forEach((v, j) => (out[positions[j]!] = v));
          }),
        );
        return out;
      },
      matching: async (filters, advancedFilters, limit) => {
        const parts = (await ask({ op: 'matching', limit, ...(filters ? { filters } : {}), ...(advancedFilters ? { advanced_filters: advancedFilters } : {}) })).map((p) => p.answer as { ids: number[]; truncated: boolean });
        const all = Float64Array.from(parts.flatMap((p) => p.ids)).sort();
        return { ids: all.slice(0, limit), truncated: parts.some((p) => p.truncated) || all.length > limit };
      },
      metadata: async (ids) => {
        const out: (Metadata | undefined)[] = new Array(ids.length).fill(undefined);
        await Promise.all(
          [...(await byShard(ids))].map(async ([shard, positions]) => {
            const [{ answer }] = await ask({ op: 'metadata', ids: positions.map((k) => ids[k]!) }, shard);
            (answer as { metadata: (Metadata | null)[] }).metadata.forEach((m, j) => (out[positions[j]!] = m ?? undefined));
          }),
        );
        return out;
      },
    };
  }

  /** Every in-sync replica rebuilds its index; the statistics of one per shard as it started. */
  async rebuild(r: DatasetRecord): Promise<DatasetStats> {
    const started = await this.everyReplica(r, async (calls, shard) => ({ shard, stats: await calls.rebuild(r.id, shard) }));
    const perShard = new Map(started.map((s) => [s.shard, s.stats]));
    return mergeStats(r, [...perShard.values()]);
  }

  /**
   * Every in-sync replica applies the record's settings; their policy (the record's, the same on
   * each) and SLA state. A search waits for its slowest shard, so the observed latencies are the
   * highest any replica observed, and the probes the deepest any replica uses.
   */
  async apply(r: DatasetRecord): Promise<{ promotion: PromotionPolicy; sla: SlaStatus }> {
    const seq = await this.opts.catalogHead();
    const all = await this.everyReplica(r, (calls, shard) => calls.settings(r.id, shard, seq));
    const highest = (pick: (s: SlaStatus) => number | null) => {
      const seen = all.map((a) => pick(a.sla)).filter((v): v is number => v !== null);
      return seen.length > 0 ? Math.max(...seen) : null;
    };
    const sla: SlaStatus = {
      ...all[0]!.sla,
      observed_p50_us: highest((s) => s.observed_p50_us),
      observed_p99_us: highest((s) => s.observed_p99_us),
      current_nprobe: highest((s) => s.current_nprobe),
      current_beam_width: highest((s) => s.current_beam_width),
    };
    return { promotion: all[0]!.promotion, sla };
  }

  /** `fn` on every in-sync replica of every shard; a replica that refuses fails the call. */
  private async everyReplica<T>(r: DatasetRecord, fn: (calls: ReplicaCalls, shard: number) => Promise<T>): Promise<T[]> {
    const map = await this.map(r);
    const jobs: Promise<T>[] = [];
    for (const e of map) {
      const replicas = serving(e);
      if (replicas.length === 0) notServing(r, e);
      for (const replica of replicas) jobs.push(fn(this.calls(replica), e.shard));
    }
    return Promise.all(jobs);
  }

  /** The write's appended entries applied as `concern` asks; answers the summed results (a delete's count). */
  private async write(r: DatasetRecord, entry: LogEntry, concern: WriteConcern, viaStorage = false): Promise<number> {
    const settings = await this.settings(r);
    const map = await this.map(r);
    const parts = splitByShard(entry, settings.shards);
    const touched = parts.map((p) => map.find((e) => e.shard === p.shard)!);
    for (const e of touched) {
      const inSync = serving(e).length;
      if (inSync === 0) notServing(r, e);
      if (inSync < needed(concern, settings.replicas)) {
        throw new SableError(
          'vecstack_router_failed',
          `shard ${e.shard} of dataset ${r.id} has ${inSync} in-sync replica(s) of ${settings.replicas}; write_concern '${concern}' needs ${needed(concern, settings.replicas)}: nothing was written, retry shortly`,
          { retryAfterSeconds: 1 },
        );
      }
    }
    let logged: LogPart[] = parts;
    if (viaStorage) {
      logged = await Promise.all(
        parts.map(async (p) => {
          const bytes = encodeEntry(p.entry);
          const key = bulkEntryKey(r.id, p.shard);
          await this.opts.objects.put(key, Readable.from([bytes]), { exact: bytes.byteLength }, 'application/octet-stream').catch((err: Error) => {
            throw new SableError('vecstack_router_failed', `the batch could not be stored: ${err.message}`, { retryAfterSeconds: 1 });
          });
          return { shard: p.shard, blobKey: key };
        }),
      );
    }
    let appended;
    try {
      appended = await appendParts(this.opts.pool, r.id, logged, `${this.opts.nodeId}:${randomUUID()}`);
    } catch (err) {
      // Not logged: no replica will read the batch's objects.
      for (const p of logged) if ('blobKey' in p) await this.opts.objects.remove(p.blobKey).catch(() => {});
      throw new SableError('vecstack_router_failed', `the write could not be logged: ${(err as Error).message}`, { retryAfterSeconds: 1 });
    }
    let total = 0;
    await Promise.all(
      appended.map(async ({ shard, seq }) => {
        const e = map.find((x) => x.shard === shard)!;
        const targets = serving(e);
        const acks = await Promise.allSettled(targets.map((t) => this.calls(t).sync(r.id, shard, seq, this.opts.ackTimeoutMs)));
        const acked = acks.filter((a): a is PromiseFulfilledResult<{ applied: number; result: number | null }> => a.status === 'fulfilled');
        if (concern === 'default') {
          // The in-sync set is what reads trust: a replica that did not apply the write leaves it.
          await Promise.all(
            targets.map((t, i) => (acks[i]!.status === 'rejected' ? demote(this.opts.pool, r.id, shard, t.node, t.epoch).catch(() => false) : false)),
          );
        }
        const need = concern === 'default' ? 1 : needed(concern, settings.replicas);
        if (acked.length < need) {
          const why = acks.find((a): a is PromiseRejectedResult => a.status === 'rejected')?.reason as Error | undefined;
          throw new SableError(
            'vecstack_router_failed',
            `the write is logged (shard ${shard}, seq ${seq}) but ${acked.length} replica(s) applied it in ${this.opts.ackTimeoutMs} ms; write_concern '${concern}' needs ${need}` +
              `${why ? ` (${why.message})` : ''}: retry the same request`,
            { retryAfterSeconds: 1 },
          );
        }
        total += acked[0]!.value.result ?? 0;
      }),
    );
    return entry.op === 'delete' ? total : entry.ids.length;
  }

  /** `fn` on an in-sync replica of the shard: this node's first, then the others in turn. */
  private async onReplica<T>(r: DatasetRecord, entry: ShardMapEntry, fn: (calls: ReplicaCalls) => Promise<T>): Promise<T> {
    const candidates = serving(entry).sort((a, b) => Number(b.node === this.opts.nodeId) - Number(a.node === this.opts.nodeId) || Math.random() - 0.5);
    if (candidates.length === 0) notServing(r, entry);
    let last: Error | undefined;
    for (const replica of candidates) {
      try {
        return await fn(this.calls(replica));
      } catch (err) {
        if (!(err instanceof SableError) || err.code !== 'vecstack_router_failed') throw err;
        last = err;
      }
    }
    throw new SableError('vecstack_router_failed', `no replica of shard ${entry.shard} of dataset ${r.id} answered (${last?.message})`, { retryAfterSeconds: 1 });
  }

  private calls(replica: ShardReplica): ReplicaCalls {
    if (replica.node === this.opts.nodeId && this.opts.local) return this.opts.local;
    let remote = this.remotes.get(replica.address);
    if (!remote) this.remotes.set(replica.address, (remote = new HttpReplica(replica.address, this.opts.secret)));
    return remote;
  }

  /** Shards and replicas never change after creation: read once per dataset. */
  private async settings(r: DatasetRecord): Promise<ClusterDatasetSettings> {
    let s = this.settingsCache.get(r.id);
    if (!s) {
      const found = await this.query(() => clusterDataset(this.opts.pool, r.id));
      if (!found) throw new SableError('dataset_not_ready', `dataset ${r.id} has no shards yet; retry shortly`, { retryAfterSeconds: 1 });
      this.settingsCache.set(r.id, (s = found));
    }
    return s;
  }

  /**
   * The dataset's shard map and heads, read after the call (a search's read-your-writes, a
   * write's replicas): concurrent callers share reads, so a busy node asks once per round trip,
   * not once per request. Callers do not change what they get (it is shared).
   */
  private async map(r: DatasetRecord): Promise<ShardMapEntry[]> {
    let reads = this.mapReads.get(r.id);
    if (!reads) this.mapReads.set(r.id, (reads = new Coalesced(() => shardMap(this.opts.pool, r.id))));
    const map = await this.query(() => reads.next());
    if (map.length === 0) throw new SableError('dataset_not_ready', `dataset ${r.id} has no shards yet; retry shortly`, { retryAfterSeconds: 1 });
    return map;
  }

  private async query<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new SableError('vecstack_router_failed', `the shard map cannot be read: ${(err as Error).message}`, { retryAfterSeconds: 1 });
    }
  }
}

/** Replicas that serve reads and count for acks: in the in-sync set, on a live node. */
function serving(entry: ShardMapEntry): ShardReplica[] {
  return entry.replicas.filter((x) => x.state === 'active' && x.live);
}

function sum<T>(items: T[], of: (x: T) => number): number {
  return items.reduce((acc, x) => acc + of(x), 0);
}

function needed(concern: WriteConcern, replicas: number): number {
  switch (concern) {
    case 'all':
      return replicas;
    case 'quorum':
      return Math.floor(replicas / 2) + 1;
    default:
      return 1;
  }
}

/** No replica of the shard serves: still being placed (never in sync), or lost. */
function notServing(r: DatasetRecord, entry: ShardMapEntry): never {
  const everServed = entry.replicas.some((x) => x.state === 'active' || x.state === 'stale');
  if (!everServed && entry.lastSeq === 0) {
    throw new SableError('dataset_not_ready', `dataset ${r.id}: shard ${entry.shard} has no replica in sync yet; retry shortly`, { retryAfterSeconds: 1 });
  }
  throw new SableError('vecstack_router_failed', `shard ${entry.shard} of dataset ${r.id} has no in-sync replica on a live node; retry shortly`, { retryAfterSeconds: 1 });
}

/** One statistics of the dataset from one per shard: counts summed, the index state of them all. */
function mergeStats(r: DatasetRecord, per: DatasetStats[]): DatasetStats {
  const building = per.filter((s) => s.index_status === 'building');
  const built = per.map((s) => s.built_at).filter((b): b is string => b !== null).sort();
  return {
    ...per[0]!,
    name: r.id,
    vector_count: sum(per, (s) => s.vector_count),
    deleted_count: sum(per, (s) => s.deleted_count),
    partitions: sum(per, (s) => s.partitions),
    growing_vectors: sum(per, (s) => s.growing_vectors),
    memory_bytes: sum(per, (s) => s.memory_bytes),
    storage_bytes: sum(per, (s) => s.storage_bytes),
    // Building while any shard builds; ready once every shard is; empty while all are.
    index_status: building.length > 0 ? 'building' : per.every((s) => s.index_status === 'empty') ? 'empty' : 'ready',
    progress: building.length > 0 ? Math.min(...building.map((s) => s.progress)) : 100,
    built_at: built.at(-1) ?? null,
  };
}

/**
 * How a search over the shards went, from each shard's receipt: their partitions side by side,
 * counts summed, the time of the slowest (the shards search at once), and the recall estimate
 * weighted by the rows each searched. Null when a shard told none.
 */
function mergeReceipts(receipts: (Receipt | null)[]): Receipt | null {
  if (receipts.length === 0 || receipts.some((x) => x === null)) return null;
  const all = receipts as Receipt[];
  const strategies = new Set(all.map((x) => x.strategy).filter((s) => s !== 'none'));
  const partitions = all.flatMap((x) => x.partitions);
  const rows = sum(partitions, (p) => p.rows);
  const recall = partitions.some((p) => p.estimated_recall === null) ? null : rows === 0 ? 1 : sum(partitions, (p) => p.estimated_recall! * p.rows) / rows;
  return {
    strategy: strategies.size === 0 ? 'none' : strategies.size === 1 ? [...strategies][0]! : 'mixed',
    candidates_scored: sum(all, (x) => x.candidates_scored),
    partitions_searched: sum(all, (x) => x.partitions_searched),
    isa: all[0]!.isa,
    partitions,
    estimated_recall: recall,
    elapsed_us: Math.max(...all.map((x) => x.elapsed_us)),
  };
}

/**
 * A hybrid search's hits over the shards: each shard answered its whole candidate pool (dense and
 * keyword, fused on its own scale), and the pools are fused again here on their raw distances
 * and BM25 scores, as one dataset fuses its pool; a shard's own normalisation (its best hit
 * always first) would otherwise rank the shards' best hits alike. BM25's idf is still each
 * shard's (its own documents' frequencies).
 */
function fuseShards(hits: ShardHit[], alpha: number, topK: number): ShardHit[] {
  const byId = new Map(hits.map((h) => [h.id, h]));
  const fused = fuse(
    hits.map((h) => ({ id: h.id, dense: h.dense_score ?? Number.NaN, keyword: h.keyword_score ?? 0 })),
    alpha,
    topK,
  );
  return fused.map((f) => ({ ...byId.get(f.id)!, ...f }));
}

/** Where one shard's part of a bulk batch is stored: a fresh key (a retried batch is a new object). */
function bulkEntryKey(dataset: string, shard: number): string {
  return `cluster/log/${datasetTag(dataset)}/${shard}/${randomUUID()}.entry`;
}
