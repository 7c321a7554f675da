/**
 * Embeds texts with the local model on worker threads (embed-worker.ts): the weights are loaded
 * once here and shared by handle; each call's batch runs on `threads` native threads. Two pool
 * threads let a short query start while a large batch is still being tokenized.
 */
import { Piscina } from 'piscina';
import { LocalEmbeddingModel, localModelDir } from '../../engine/index.js';
import type { EmbedTask } from './embed-worker.js';

export class EmbedPool {
  private readonly model: LocalEmbeddingModel;
  private readonly pool: Piscina<EmbedTask, Float32Array>;
  private readonly dir: string;

  constructor(private readonly threads: number) {
    this.dir = localModelDir();
    this.model = LocalEmbeddingModel.open({ dir: this.dir, threads });
    this.pool = new Piscina({ filename: new URL('./embed-worker.js', import.meta.url).href, minThreads: 1, maxThreads: 2, idleTimeout: 60_000 });
  }

  get dim(): number {
    return this.model.dim;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const flat = await this.pool.run({ handle: this.model.weightsHandle, dir: this.dir, threads: this.threads, texts });
    return texts.map((_, i) => flat.subarray(i * this.dim, (i + 1) * this.dim));
  }

  async close(): Promise<void> {
    await this.pool.destroy();
    this.model.close();
  }
}
