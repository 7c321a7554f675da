/** The embedded default model on the embedding worker pool (workers/embed-pool.ts), started on first use. */
import { badRequest } from '../../errors/codes.js';
import { LOCAL_MODEL } from '../../engine/index.js';
import { EmbedPool } from '../../workers/index.js';
import type { EmbeddingProvider } from './types.js';

export class LocalEmbeddingProvider implements EmbeddingProvider {
  readonly name = 'local';
  readonly maxBatch = 512;
  private pool: EmbedPool | null = null;

  constructor(private readonly threads: number) {}

  async embed(texts: string[], model: string): Promise<Float32Array[]> {
    if (model !== LOCAL_MODEL.name) {
      throw badRequest(`the local provider serves model '${LOCAL_MODEL.name}' only, not '${model}'`);
    }
    this.pool ??= new EmbedPool(this.threads);
    return this.pool.embed(texts);
  }

  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = null;
  }
}
