import { badRequest } from '../../errors/codes.js';
import { LOCAL_MODEL } from '../../engine/index.js';
/**
 * Embedding models the contract names and their dimensions. Until a deployment configures an
 * inference server for the `managed` models, a dataset created without `embedding` gets the local
 * all-MiniLM-L6-v2 model (384 dimensions), and says so.
 */

export const LOCAL_DEFAULT = { provider: 'local', model: LOCAL_MODEL.name, dim: LOCAL_MODEL.dim } as const;

const KNOWN_DIMS: Record<string, number> = {
  [LOCAL_MODEL.name]: LOCAL_MODEL.dim,
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'embed-english-v3.0': 1024,
};

const MANAGED_DIMS: Record<string, number> = { small: 768, large: 2560, default: 2560 };

export interface EmbeddingChoice {
  provider: string;
  model: string;
  secret_ref?: string;
  dim: number;
}

/** The dataset's embedding and dimension from the create body (dim may be given explicitly). */
export function chooseEmbedding(
  body: { provider?: string; model?: string; secret_ref?: string; dim?: number } | undefined,
  dim: number | undefined,
  managedConfigured: boolean,
): EmbeddingChoice {
  const provider = body?.provider ?? (body?.model && KNOWN_DIMS[body.model] ? providerOf(body.model) : undefined);
  if (!body?.provider && !body?.model) {
    if (managedConfigured) return { provider: 'managed', model: 'default', dim: dim ?? MANAGED_DIMS.default };
    return { ...LOCAL_DEFAULT, dim: dim ?? LOCAL_DEFAULT.dim };
  }
  if (provider === 'managed' || (!provider && body?.model && body.model in MANAGED_DIMS)) {
    if (!managedConfigured) {
      throw badRequest('managed embedding models need an inference server: set SABLE_MANAGED_EMBEDDINGS_URL (an OpenAI-compatible base URL), or use provider "local"');
    }
    const model = body?.model ?? 'default';
    return { provider: 'managed', model, dim: dim ?? MANAGED_DIMS[model] ?? need(model) };
  }
  const model = body?.model ?? (provider === 'local' ? LOCAL_DEFAULT.model : undefined);
  if (!model) throw badRequest('embedding.model is required with this provider');
  const known = KNOWN_DIMS[model];
  const explicit = dim ?? body?.dim;
  if (explicit !== undefined && known !== undefined && explicit !== known) {
    throw badRequest(`model '${model}' produces ${known} dimensions, not ${explicit}`);
  }
  return {
    provider: provider ?? 'openai-compatible',
    model,
    ...(body?.secret_ref ? { secret_ref: body.secret_ref } : {}),
    dim: explicit ?? known ?? need(model),
  };
}

/** The dimension a named model produces, when the table knows it. */
export function knownDim(provider: string, model: string): number | undefined {
  if (provider === 'managed') return MANAGED_DIMS[model];
  return provider === 'openai-compatible' ? undefined : KNOWN_DIMS[model];
}

function providerOf(model: string): string {
  if (model.startsWith('text-embedding-3')) return 'openai';
  if (model.startsWith('embed-')) return 'cohere';
  return 'local';
}

function need(model: string): never {
  throw badRequest(`the dimension of model '${model}' is unknown: give "dim" explicitly`);
}
