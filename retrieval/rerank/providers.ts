/**
 * The rerank providers an organization can use: always the local lexical one, plus the HTTP
 * provider the deployment configures (Cohere / Jina format), whose key is the organization
 * secret `rerank:<provider>:api_key`.
 */
import { HttpRerankProvider } from './http-provider.js';
import { LocalRerankProvider } from './local-provider.js';
import type { RerankProvider } from './types.js';

export interface RerankSettings {
  /** The default provider: `local`, `cohere`, `jina`, or another name with a URL. */
  provider: string;
  url?: string;
  model?: string;
  timeoutMs: number;
}

const DEFAULT_URLS: Record<string, string> = { cohere: 'https://api.cohere.com', jina: 'https://api.jina.ai' };
const DEFAULT_MODELS: Record<string, string> = { cohere: 'rerank-english-v3.0', jina: 'jina-reranker-v2-base-multilingual' };

export class RerankProviders {
  private readonly local = new LocalRerankProvider();

  constructor(
    private readonly settings: RerankSettings,
    private readonly revealSecret: (orgId: string, ref: string) => string | undefined,
  ) {}

  get defaultProvider(): string {
    return this.settings.provider;
  }

  providersFor(orgId: string): ReadonlyMap<string, RerankProvider> {
    const out = new Map<string, RerankProvider>([['local', this.local]]);
    const name = this.settings.provider;
    if (name !== 'local') {
      const baseUrl = this.settings.url ?? DEFAULT_URLS[name];
      if (baseUrl) {
        out.set(name, new HttpRerankProvider({
          name,
          baseUrl,
          defaultModel: this.settings.model ?? DEFAULT_MODELS[name] ?? 'default',
          timeoutMs: this.settings.timeoutMs,
          apiKey: () => this.revealSecret(orgId, `rerank:${name}:api_key`),
        }));
      }
    }
    return out;
  }
}
