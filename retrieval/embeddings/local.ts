/** The embedded default model on the embedding worker pool (embed-pool.ts), started on first use. */
import { badRequest } from '../../errors/codes.js';
import { LOCAL_MODEL } from '../../engine/index.js';
import { EmbedPool } from './embed-pool.js';
import type { EmbedKind, EmbeddingProvider } from './types.js';

/**
 * Longer texts are refused: a text is embedded whole (windows averaged), so its cost grows with
 * its length on the shared embedding threads; a few megabytes held them for many minutes. This
 * is about 25,000 tokens, far above any chunk ingestion makes.
 */
export const MAX_TEXT_CHARS = 100_000;

export class LocalEmbeddingProvider implements EmbeddingProvider {
  readonly name = 'local';
  readonly maxBatch = 512;
  private pool: EmbedPool | null = null;

  constructor(private readonly threads: number) {}

  async embed(texts: string[], model: string, kind: EmbedKind): Promise<Float32Array[]> {
    if (model !== LOCAL_MODEL.name) {
      throw badRequest(`the local provider serves model '${LOCAL_MODEL.name}' only, not '${model}'`);
    }
    const long = texts.findIndex((t) => t.length > MAX_TEXT_CHARS);
    if (long >= 0) {
      throw badRequest(`a text of ${texts[long].length} characters is longer than the local model embeds (${MAX_TEXT_CHARS}): split it`);
    }
    this.pool ??= new EmbedPool(this.threads);
    return this.pool.embed(texts, kind);
  }

  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = null;
  }
}
