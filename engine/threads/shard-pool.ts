/**
 * The engine's ShardRunner on piscina threads: a search over several shards (groups of segments)
 * runs them in parallel here. The addon's segments live once in process memory, so a worker
 * reaches the same indexes as the main thread without a copy.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { NativeQueryOptions, NativeResult } from '../native.js';
import type { ShardRunner } from '../types.js';
import type { ShardTask } from './shard-worker.js';

export interface ShardPoolOptions {
  threads?: number;
  /** Partitions per shard; a search over more partitions fans out. */
  partitionsPerShard?: number;
}

export class ShardPool implements ShardRunner {
  private readonly pool: Piscina<ShardTask, NativeResult>;
  readonly partitionsPerShard: number;
  readonly threads: number;

  constructor(opts: ShardPoolOptions = {}) {
    const threads = (this.threads = opts.threads ?? Math.max(1, availableParallelism()));
    this.partitionsPerShard = opts.partitionsPerShard ?? 4;
    this.pool = new Piscina({
      filename: new URL('./shard-worker.js', import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
    });
  }

  runShard(handles: number[], query: Float32Array, options: NativeQueryOptions): Promise<NativeResult> {
    return this.pool.run({ handles, query, options });
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
