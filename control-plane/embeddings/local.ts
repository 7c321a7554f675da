/** The embedded default model (engine/embedding) behind the provider interface, opened on first use. */
import { LocalEmbeddingModel, LOCAL_MODEL } from '../../engine/embedding/local-model.js';
import { EmbeddingError, type EmbeddingProvider } from './types.js';

export class LocalEmbeddingProvider implements EmbeddingProvider {
  readonly name = 'local';
  readonly maxBatch = 512;
  private model: LocalEmbeddingModel | null = null;

  constructor(private readonly threads: number) {}

  async embed(texts: string[], model: string): Promise<Float32Array[]> {
    if (model !== LOCAL_MODEL.name) {
      throw new EmbeddingError('not_configured', `the local provider serves model '${LOCAL_MODEL.name}' only, not '${model}'`);
    }
    this.model ??= LocalEmbeddingModel.open({ threads: this.threads });
    return this.model.embed(texts);
  }

  close(): void {
    this.model?.close();
    this.model = null;
  }
}
