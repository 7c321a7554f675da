/**
 * Calls to the replicas a router reaches: the node's own ShardHost directly, another node's over
 * its internal routes (replica-wire.ts). Both answer the same three calls, so the router does not
 * care where a replica lives. A remote call is bounded (the wait it asks for plus a margin); a 400
 * with a contract code is raised as that code (a bad filter is the caller's 400 on every
 * replica), anything else (refused connection, timeout, a 5xx, a refused secret) as
 * vecstack_router_failed, which tells the router to try another replica.
 */
import { isErrorCode, SableError } from '../errors/codes.js';
import type { DatasetStats, Metadata, PromotionPolicy, Receipt, SlaStatus, TuningInEffect } from '../engine/index.js';
import type { ShardHit, ShardSearch } from '../retrieval/sharded.js';
import { CLUSTER_SECRET_HEADER, type AdminBody, type RowsAnswer, type RowsBody, type RowsQuery, type PointAnswer, type PointBody, type ReplicaSearchAnswer, type ReplicaSearchBody, type SyncAnswer, type SyncBody } from './replica-wire.js';

export interface ReplicaCalls {
  sync(dataset: string, shard: number, seq: number, timeoutMs: number): Promise<{ applied: number; result: number | null }>;
  search(dataset: string, shard: number, minSeq: number, req: ShardSearch, waitMs: number): Promise<{ hits: ShardHit[]; applied: number; receipt: Receipt | null }>;
  point(dataset: string, shard: number, minSeq: number, id: number, withVector: boolean, waitMs: number): Promise<{ metadata: Metadata; vector?: Float32Array } | undefined>;
  stats(dataset: string, shard: number): Promise<DatasetStats>;
  tuning(dataset: string, shard: number): Promise<TuningInEffect>;
  /** Starts a rebuild of the replica's index; answers its statistics the moment it started. */
  rebuild(dataset: string, shard: number): Promise<DatasetStats>;
  /** Applies the dataset record's settings now; the replica's promotion policy and SLA state after. */
  settings(dataset: string, shard: number, catalogSeq: number): Promise<{ promotion: PromotionPolicy; sla: SlaStatus }>;
  /** The answer tools' reads of the replica's rows, once it applied `minSeq`. */
  rows(dataset: string, shard: number, minSeq: number, waitMs: number, query: RowsQuery): Promise<RowsAnswer>;
}

/** Time a settings change may take on a replica (it may wait for a seal to finish). */
const ADMIN_WAIT_MS = 10_000;

/** Time a remote call may take beyond the wait it asks the replica for. */
const CALL_MARGIN_MS = 2000;

export class HttpReplica implements ReplicaCalls {
  constructor(
    private readonly baseUrl: string,
    private readonly secret: string,
  ) {}

  async sync(dataset: string, shard: number, seq: number, timeoutMs: number) {
    const body: SyncBody = { seq, timeout_ms: timeoutMs };
    return this.call<SyncAnswer>(dataset, shard, 'sync', body, timeoutMs);
  }

  async search(dataset: string, shard: number, minSeq: number, req: ShardSearch, waitMs: number) {
    const body: ReplicaSearchBody = {
      min_seq: minSeq,
      wait_ms: waitMs,
      query: req.query ? Array.from(req.query) : null,
      ...(req.keyword ? { keyword: req.keyword } : {}),
      top_k: req.topK,
      ...(req.nprobe !== undefined ? { nprobe: req.nprobe } : {}),
      ...(req.rerankDepth !== undefined ? { rerank_depth: req.rerankDepth } : {}),
      ...(req.filters ? { filters: req.filters } : {}),
      ...(req.advancedFilters ? { advanced_filters: req.advancedFilters } : {}),
      include_metadata: req.includeMetadata,
      include_vectors: req.includeVectors,
    };
    const answer = await this.call<ReplicaSearchAnswer>(dataset, shard, 'search', body, waitMs);
    const hits: ShardHit[] = answer.hits.map(({ vector, metadata, ...rest }) => ({
      ...rest,
      ...(metadata ? { metadata: metadata as Metadata } : {}),
      ...(vector ? { vector: Float32Array.from(vector) } : {}),
    }));
    return { hits, applied: answer.applied, receipt: answer.receipt as Receipt | null };
  }

  async point(dataset: string, shard: number, minSeq: number, id: number, withVector: boolean, waitMs: number) {
    const body: PointBody = { min_seq: minSeq, wait_ms: waitMs, id, with_vector: withVector };
    const answer = await this.call<PointAnswer>(dataset, shard, 'point', body, waitMs);
    if (!answer.found) return undefined;
    return { metadata: (answer.metadata ?? {}) as Metadata, ...(answer.vector ? { vector: Float32Array.from(answer.vector) } : {}) };
  }

  stats(dataset: string, shard: number): Promise<DatasetStats> {
    return this.call<DatasetStats>(dataset, shard, 'admin', { op: 'stats' } satisfies AdminBody, ADMIN_WAIT_MS);
  }

  tuning(dataset: string, shard: number): Promise<TuningInEffect> {
    return this.call<TuningInEffect>(dataset, shard, 'admin', { op: 'tuning' } satisfies AdminBody, ADMIN_WAIT_MS);
  }

  rebuild(dataset: string, shard: number): Promise<DatasetStats> {
    return this.call<DatasetStats>(dataset, shard, 'admin', { op: 'rebuild' } satisfies AdminBody, ADMIN_WAIT_MS);
  }

  settings(dataset: string, shard: number, catalogSeq: number): Promise<{ promotion: PromotionPolicy; sla: SlaStatus }> {
    return this.call(dataset, shard, 'admin', { op: 'settings', catalog_seq: catalogSeq } satisfies AdminBody, ADMIN_WAIT_MS);
  }

  rows(dataset: string, shard: number, minSeq: number, waitMs: number, query: RowsQuery): Promise<RowsAnswer> {
    return this.call<RowsAnswer>(dataset, shard, 'rows', { ...query, min_seq: minSeq, wait_ms: waitMs } satisfies RowsBody, waitMs);
  }

  private async call<T>(dataset: string, shard: number, what: string, body: unknown, waitMs: number): Promise<T> {
    const url = `${this.baseUrl}/internal/shards/${encodeURIComponent(dataset)}/${shard}/${what}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [CLUSTER_SECRET_HEADER]: this.secret },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(waitMs + CALL_MARGIN_MS),
      });
    } catch (err) {
      throw new SableError('vecstack_router_failed', `${this.baseUrl} did not answer ${what} of shard ${shard}: ${(err as Error).message}`);
    }
    const text = await res.text().catch(() => '');
    if (res.ok) return JSON.parse(text) as T;
    let error: { error?: unknown; message?: unknown } = {};
    try {
      error = JSON.parse(text);
    } catch {
      // not JSON: a proxy's page, reported as a routing failure below
    }
    const message = typeof error.message === 'string' ? error.message : `HTTP ${res.status}`;
    // A 400 is the request's fault and every replica would say so; a refused secret or a route
    // an older node lacks is the cluster's, which the caller must not see as theirs.
    if (res.status === 400 && isErrorCode(error.error)) throw new SableError(error.error, message);
    throw new SableError('vecstack_router_failed', `${this.baseUrl} answered ${what} of shard ${shard} with ${res.status}: ${message}`);
  }
}
