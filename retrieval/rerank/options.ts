/**
 * The search body's `rerank` (already valid against its schema, retrieval/requests.ts) to the
 * options a rerank runs with: on or off, the server's defaults filled in, and the provider and
 * model checked against what this server offers.
 */
import { badRequest } from '../../errors/codes.js';
import { DEFAULT_MAX_DOCUMENTS, type RerankRequest } from '../requests.js';
import type { RerankOptions, RerankProvider } from './types.js';

export interface RerankDefaults {
  /** The server's default provider name. */
  provider: string;
  /** Configured providers: when given, names are validated and the default model filled in. */
  providers?: ReadonlyMap<string, RerankProvider>;
  max_documents?: number;
  fail_open?: boolean;
}

const OPTION_FIELDS = ['provider', 'model', 'top_n', 'max_documents', 'fail_open'] as const;

/**
 * null when rerank is off: absent, `false`, `{enabled: false}`, or `{}` (the contract's enabled
 * defaults to false). `true`, `{enabled: true, ...}`, or an object setting any other rerank field
 * without `enabled: false` turns it on; other keys are ignored, as elsewhere in the body.
 */
export function parseRerankOption(raw: RerankRequest | undefined, topK: number, defaults: RerankDefaults): RerankOptions | null {
  if (raw === undefined || raw === false) return null;
  const o = raw === true ? { enabled: true } : raw;
  const on = o.enabled ?? OPTION_FIELDS.some((f) => o[f] !== undefined);
  if (!on) return null;
  const provider = o.provider ?? defaults.provider;
  const failOpen = o.fail_open ?? defaults.fail_open ?? true;
  let model = o.model;
  const p = defaults.providers?.get(provider);
  if (defaults.providers && !p && !failOpen) {
    const known = [...defaults.providers.keys()].join(', ') || 'none';
    throw badRequest(`rerank.provider '${provider}' is not configured on this server (available: ${known})`);
  }
  // An unknown provider under fail_open is a provider problem: the search answers in its own
  // order, and the rerank status says why (rerank.ts).
  if (p) {
    if (model !== undefined && p.models && !p.models.includes(model)) {
      throw badRequest(`rerank.model '${model}' is not offered by provider '${provider}' (available: ${p.models.join(', ')})`);
    }
    model ??= p.defaultModel;
  }
  return {
    enabled: true,
    provider,
    model: model ?? '',
    top_n: o.top_n ?? topK,
    max_documents: o.max_documents ?? defaults.max_documents ?? DEFAULT_MAX_DOCUMENTS,
    fail_open: failOpen,
  };
}
