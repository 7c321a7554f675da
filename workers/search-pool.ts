/**
 * Searches off the HTTP thread. A dataset with several shards (groups of partitions) is searched
 * on piscina worker threads in parallel and the shards' top-k merged; a single shard goes to the
 * native AsyncWorker on the libuv pool instead, batched with the other single-shard searches of
 * the same event-loop turn (search-batcher.ts), because the piscina hop (structured clones and a
 * message port round trip) measured about 115 us of CPU per query, as much as the search itself
 * (bench/results/http.md).
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { SableError } from '../errors/codes.js';
import { mergeShards, receiptOf, type Dataset, type Hit, type NativeResult, type Receipt, type SearchOptions } from '../engine/index.js';
import { SearchBatcher } from './search-batcher.js';
import type { SearchTask } from './search-worker.js';

export interface SearchPoolOptions {
  threads?: number;
  /** Partitions per shard; a search over more partitions fans out. */
  partitionsPerShard?: number;
}

export class SearchPool {
  private readonly pool: Piscina<SearchTask, NativeResult>;
  private readonly partitionsPerShard: number;
  private readonly batcher: SearchBatcher;

  constructor(opts: SearchPoolOptions = {}) {
    const threads = opts.threads ?? Math.max(1, availableParallelism());
    this.partitionsPerShard = opts.partitionsPerShard ?? 4;
    this.batcher = new SearchBatcher(threads);
    this.pool = new Piscina({
      filename: new URL('./search-worker.js', import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
    });
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  async search(ds: Dataset, query: Float32Array, opts: SearchOptions = {}): Promise<{ hits: Hit[]; receipt: Receipt }> {
    const plan = ds.plan(opts);
    if (!(query instanceof Float32Array) || query.length !== ds.dim) {
      throw new SableError('invalid_argument', `the query must be a Float32Array of ${ds.dim} values`);
    }
    ds.checkQuery(query);
    const t0 = performance.now();
    const shards: number[][] = [];
    for (let i = 0; i < plan.handles.length; i += this.partitionsPerShard) {
      shards.push(plan.handles.slice(i, i + this.partitionsPerShard));
    }
    const results =
      shards.length <= 1
        ? [await this.batcher.search(plan.handles, query, plan.options)]
        : await Promise.all(shards.map((handles) => this.pool.run({ handles, query, options: plan.options })));
    const merged = mergeShards(results, plan.options.k);
    const elapsed = Math.round((performance.now() - t0) * 1000);
    ds.recordLatency(elapsed);
    return { hits: ds.hits(merged, opts.includeMetadata ?? true), receipt: receiptOf(results, elapsed) };
  }

  /** Hybrid search whose dense part runs on the pool. */
  hybridSearch(ds: Dataset, query: Float32Array | null, text: string, opts: SearchOptions & { alpha: number }) {
    return ds.hybridSearch(query, text, opts, (q, o) => this.search(ds, q, o));
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
