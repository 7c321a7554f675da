/**
 * Embeds texts with the local model on worker threads (embed-worker.ts): the weights are loaded
 * once here and shared by handle; each call's batch runs on `threads` native threads. Queries
 * and documents have a pool each: a query (which a search waits for) never queues behind an
 * ingestion's batch of 512 chunks, and documents compute at background priority.
 */
import { Piscina } from 'piscina';
import { LocalEmbeddingModel, localModelDir } from '../../engine/index.js';
import type { EmbedTask } from './embed-worker.js';
import type { EmbedKind } from './types.js';

export class EmbedPool {
  private readonly model: LocalEmbeddingModel;
  private readonly pools: Record<EmbedKind, Piscina<EmbedTask, Float32Array>>;
  private readonly dir: string;

  constructor(private readonly threads: number) {
    this.dir = localModelDir();
    this.model = LocalEmbeddingModel.open({ dir: this.dir, threads });
    const pool = (minThreads: number) => new Piscina<EmbedTask, Float32Array>({ filename: new URL('./embed-worker.js', import.meta.url).href, minThreads, maxThreads: 1, idleTimeout: 60_000 });
    this.pools = { query: pool(1), document: pool(0) };
  }

  get dim(): number {
    return this.model.dim;
  }

  async embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const task: EmbedTask = { handle: this.model.weightsHandle, dir: this.dir, threads: this.threads, texts, background: kind === 'document' };
    const flat = await this.pools[kind].run(task);
    return texts.map((_, i) => flat.subarray(i * this.dim, (i + 1) * this.dim));
  }

  async close(): Promise<void> {
    await Promise.all([this.pools.query.destroy(), this.pools.document.destroy()]);
    this.model.close();
  }
}
