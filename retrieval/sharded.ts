/**
 * The port through which the retrieval use-cases reach vectors that are not in this process's
 * engine: in cluster mode a dataset's vectors live in shard replicas on the search nodes, and
 * `cluster/router.ts` implements this over them (writes through the shard logs, honouring the
 * write concern; searches fanned out to one in-sync replica per shard and merged). Embedded,
 * there is no such port: the use-cases call the engine dataset directly.
 */
import type { DatasetRecord } from '../catalog/datasets/record.js';
import type { AdvancedFilter, Hit, Metadata, Receipt } from '../engine/index.js';
import type { Scalar } from '../contract/json-schema.js';

export type WriteConcern = 'default' | 'one' | 'quorum' | 'all';

export interface ShardSearch {
  /** The query vector; null for a keyword-only hybrid search. */
  query: Float32Array | null;
  /** With it the search is hybrid: dense and BM25 fused by `alpha` in each shard. */
  keyword?: { text: string; alpha: number };
  topK: number;
  nprobe?: number;
  rerankDepth?: number;
  filters?: Record<string, Scalar>;
  advancedFilters?: AdvancedFilter[];
  includeMetadata: boolean;
  includeVectors: boolean;
}

export interface ShardHit extends Hit {
  vector?: Float32Array;
  dense_score?: number | null;
  keyword_score?: number;
  dense_contribution?: number;
  keyword_contribution?: number;
}

export interface ShardedVectors {
  /** Rows upserted once the write concern's replicas applied them. */
  upsert(r: DatasetRecord, ids: number[], values: Float32Array, metadata: Metadata[]): Promise<void>;
  /** Answers how many of the ids were there. */
  delete(r: DatasetRecord, ids: number[], writeConcern: WriteConcern): Promise<number>;
  /** The best `topK` over every shard, ascending score, and how the shards searched (their receipts merged). */
  search(r: DatasetRecord, request: ShardSearch): Promise<{ hits: ShardHit[]; receipt: Receipt | null }>;
  /** One vector's metadata (and values), from its shard. */
  point(r: DatasetRecord, id: number, withVector: boolean): Promise<{ metadata: Metadata; vector?: Float32Array } | undefined>;
}
