/**
 * Searches off the HTTP thread. A dataset with several shards (groups of partitions) is searched
 * on piscina worker threads in parallel and the shards' top-k merged; a single shard goes to the
 * native AsyncWorker on the libuv pool instead, because the piscina hop (structured clones and a
 * message port round trip) measured about 115 us of CPU per query, as much as the search itself
 * (bench/results/http.md).
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { SableError, type Dataset, type Hit, type Receipt, type SearchOptions } from '../engine/index.js';
import { native, type NativeResult } from '../engine/native.js';
import type { SearchTask } from './search-worker.js';

export interface SearchPoolOptions {
  threads?: number;
  /** Partitions per shard; a search over more partitions fans out. */
  partitionsPerShard?: number;
}

export class SearchPool {
  private readonly pool: Piscina<SearchTask, NativeResult>;
  private readonly partitionsPerShard: number;

  constructor(opts: SearchPoolOptions = {}) {
    const threads = opts.threads ?? Math.max(1, availableParallelism());
    this.partitionsPerShard = opts.partitionsPerShard ?? 4;
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
      throw new SableError(`the query must be a Float32Array of ${ds.dim} values`, 'invalid_argument');
    }
    const t0 = performance.now();
    const shards: number[][] = [];
    for (let i = 0; i < plan.handles.length; i += this.partitionsPerShard) {
      shards.push(plan.handles.slice(i, i + this.partitionsPerShard));
    }
    const results =
      shards.length <= 1
        ? [await native.searchAsync(plan.handles, query, plan.options)]
        : await Promise.all(shards.map((handles) => this.pool.run({ handles, query, options: plan.options })));
    const merged = mergeResults(results, plan.options.k);
    const elapsed = Math.round((performance.now() - t0) * 1000);
    ds.recordLatency(elapsed);
    return { hits: ds.hits(merged, opts.includeMetadata ?? true), receipt: { ...merged.receipt, elapsed_us: elapsed } };
  }

  /** Hybrid search whose dense part runs on the pool. */
  hybridSearch(ds: Dataset, query: Float32Array | null, text: string, opts: SearchOptions & { alpha: number }) {
    return ds.hybridSearch(query, text, opts, (q, o) => this.search(ds, q, o));
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

/** The k best of several shard results, and one receipt covering them all. */
export function mergeResults(results: NativeResult[], k: number): NativeResult {
  if (results.length === 1) return results[0];
  const all: { id: number; score: number }[] = [];
  for (const r of results) for (let i = 0; i < r.ids.length; i++) all.push({ id: r.ids[i], score: r.scores[i] });
  all.sort((a, b) => a.score - b.score || a.id - b.id);
  const top = all.slice(0, k);
  const partitions = results.flatMap((r) => r.receipt.partitions);
  const strategies = new Set(results.map((r) => r.receipt.strategy).filter((s) => s !== 'none'));
  return {
    ids: Float64Array.from(top, (h) => h.id),
    scores: Float32Array.from(top, (h) => h.score),
    receipt: {
      strategy: strategies.size === 0 ? 'none' : strategies.size === 1 ? [...strategies][0] : 'mixed',
      candidates_scored: results.reduce((s, r) => s + r.receipt.candidates_scored, 0),
      partitions_searched: results.reduce((s, r) => s + r.receipt.partitions_searched, 0),
      isa: results[0].receipt.isa,
      partitions,
    },
  };
}
