/**
 * Embeds texts with a dataset's embedding configuration: picks the provider, reads its API key
 * from the organization's secrets (`embedding.secret_ref`, else `emb:<provider>:api_key`), splits
 * the texts into the provider's batches, checks every vector has the dataset's dimension, and
 * keeps recent query embeddings in a small LRU cache so a repeated question costs nothing.
 *
 * Providers: `local` (the embedded all-MiniLM-L6-v2, no key), `openai`, `cohere`,
 * `openai-compatible` (the base URL a deployment configures; key optional) and `managed` (the
 * contract's models on the inference server a deployment configures, OpenAI format).
 */
import { knownDim } from '../../catalog/datasets/embedding-models.js';
import { badRequest, SableError } from '../../errors/codes.js';
import { OutboundError, type RetryPolicy } from '../../outbound/post-json.js';
import { CohereEmbeddingProvider } from './cohere.js';
import { LocalEmbeddingProvider } from './local.js';
import { Lru } from './lru.js';
import { OpenAiEmbeddingProvider } from './openai.js';
import type { EmbedKind, EmbeddingProvider } from './types.js';

export interface EmbeddingSettings {
  openaiUrl: string;
  cohereUrl: string;
  /** Base URL of an OpenAI-compatible server for provider `openai-compatible`. */
  compatibleUrl?: string;
  /** Base URL of the inference server of the `managed` models. */
  managedUrl?: string;
  timeoutMs: number;
  retries: number;
  backoffMs: number;
  /** Query embeddings kept (0: no cache). */
  cacheEntries: number;
  /** Threads of the local model. */
  localThreads: number;
}

export interface EmbeddingTarget {
  provider: string;
  model: string;
  secret_ref?: string;
  dim: number;
}

/** Providers whose calls need a key; the others send one only when the organization stored it. */
const NEEDS_KEY = new Set(['openai', 'cohere']);

export class Embedder {
  private readonly providers = new Map<string, EmbeddingProvider>();
  private readonly local: LocalEmbeddingProvider;
  private readonly cache: Lru<string, Float32Array>;
  constructor(
    settings: EmbeddingSettings,
    private readonly secret: (orgId: string, ref: string) => string | undefined,
    private readonly observe: (provider: string, texts: number, cached: boolean) => void = () => {},
  ) {
    const policy: RetryPolicy = { timeoutMs: settings.timeoutMs, retries: settings.retries, backoffMs: settings.backoffMs };
    this.local = new LocalEmbeddingProvider(settings.localThreads);
    this.providers.set('local', this.local);
    this.providers.set('openai', new OpenAiEmbeddingProvider('openai', settings.openaiUrl, policy));
    this.providers.set('cohere', new CohereEmbeddingProvider(settings.cohereUrl, policy));
    if (settings.compatibleUrl) this.providers.set('openai-compatible', new OpenAiEmbeddingProvider('openai-compatible', settings.compatibleUrl, policy));
    if (settings.managedUrl) this.providers.set('managed', new OpenAiEmbeddingProvider('managed', settings.managedUrl, policy));
    this.cache = new Lru(settings.cacheEntries);
  }

  get managedConfigured(): boolean {
    return this.providers.has('managed');
  }

  /** One vector per text; errors are invalid_request (configuration) or upstream_error (the provider). */
  async embed(orgId: string, target: EmbeddingTarget, texts: string[], kind: EmbedKind): Promise<Float32Array[]> {
    const provider = this.providers.get(target.provider);
    if (!provider) throw badRequest(notConfigured(target.provider));
    const modelDim = knownDim(target.provider, target.model);
    if (modelDim !== undefined && modelDim !== target.dim) {
      throw badRequest(
        `model '${target.model}' produces ${modelDim} dimensions and this dataset holds ${target.dim}: text needs a dataset created for the model (or send vectors)`);
    }
    const ref = target.secret_ref ?? `emb:${target.provider}:api_key`;
    const key = target.provider === 'local' ? undefined : this.secret(orgId, ref);
    if (key === undefined && NEEDS_KEY.has(target.provider)) {
      throw badRequest(`the ${target.provider} provider needs an API key: store it with PUT /org-secrets/${encodeURIComponent(ref)}`);
    }
    const cacheKey = (text: string) => `${orgId}\u0000${target.provider}\u0000${target.model}\u0000${text}`;
    const out: (Float32Array | undefined)[] = kind === 'query' ? texts.map((t) => this.cache.get(cacheKey(t))) : new Array(texts.length);
    const missing = texts.map((_, i) => i).filter((i) => out[i] === undefined);
    if (missing.length < texts.length) this.observe(target.provider, texts.length - missing.length, true);
    try {
      for (let start = 0; start < missing.length; start += provider.maxBatch) {
        const batch = missing.slice(start, start + provider.maxBatch);
        const vectors = await provider.embed(batch.map((i) => texts[i]), target.model, kind, key);
        this.observe(target.provider, batch.length, false);
        batch.forEach((i, j) => {
          const v = vectors[j];
          if (v.length !== target.dim) {
            throw new OutboundError('upstream_error', `${target.provider} model '${target.model}' returned ${v.length} dimensions; the dataset has ${target.dim}`);
          }
          out[i] = v;
          if (kind === 'query') this.cache.set(cacheKey(texts[i]), v);
        });
      }
    } catch (e) {
      if (!(e instanceof OutboundError)) throw e;
      throw new SableError('upstream_error', e.message);
    }
    return out as Float32Array[];
  }

  close(): Promise<void> {
    return this.local.close();
  }
}

function notConfigured(provider: string): string {
  if (provider === 'managed') return 'managed embedding models need an inference server: set SABLE_MANAGED_EMBEDDINGS_URL (an OpenAI-compatible base URL)';
  if (provider === 'openai-compatible') return 'provider openai-compatible needs a server: set SABLE_EMBEDDINGS_COMPATIBLE_URL (its OpenAI-compatible base URL)';
  return `unknown embedding provider '${provider}' (local, openai, cohere, openai-compatible, managed)`;
}
