/** The search body's `rerank` field (boolean or object) to validated options. */
import { ApiError } from '../errors.js';
import type { RerankOptions, RerankProvider } from './types.js';

export const DEFAULT_MAX_DOCUMENTS = 100;
export const MAX_MAX_DOCUMENTS = 1000;
/** Same ceiling as the search body's top_k. */
export const MAX_TOP_N = 10_000;

export interface RerankDefaults {
  /** The server's default provider name. */
  provider: string;
  /** Configured providers: when given, names are validated and the default model filled in. */
  providers?: ReadonlyMap<string, RerankProvider>;
  max_documents?: number;
  fail_open?: boolean;
}

const FIELDS = ['enabled', 'provider', 'model', 'top_n', 'max_documents', 'fail_open'] as const;

/**
 * null when rerank is off: absent, `false`, `{enabled: false}`, or `{}` (the contract's enabled
 * defaults to false). `true`, `{enabled: true, ...}`, or an object setting any other rerank field
 * without `enabled: false` turns it on. Unknown keys are ignored, as elsewhere in the search body.
 */
export function parseRerankOption(raw: unknown, topK: number, defaults: RerankDefaults): RerankOptions | null {
  if (raw === undefined || raw === false) return null;
  const o: Record<string, unknown> = raw === true ? { enabled: true } : asObject(raw);

  const enabled = o.enabled;
  if (enabled !== undefined && typeof enabled !== 'boolean') bad('rerank.enabled must be a boolean');
  const provider = optString(o, 'provider') ?? defaults.provider;
  let model = optString(o, 'model');
  const topN = optInt(o, 'top_n', 1, MAX_TOP_N) ?? topK;
  const maxDocuments = optInt(o, 'max_documents', 1, MAX_MAX_DOCUMENTS) ?? defaults.max_documents ?? DEFAULT_MAX_DOCUMENTS;
  const failOpen = o.fail_open ?? defaults.fail_open ?? true;
  if (typeof failOpen !== 'boolean') bad('rerank.fail_open must be a boolean');

  const on = enabled ?? FIELDS.some((f) => f !== 'enabled' && o[f] !== undefined);
  if (!on) return null;

  if (defaults.providers) {
    const p = defaults.providers.get(provider);
    if (!p) {
      const known = [...defaults.providers.keys()].join(', ') || 'none';
      bad(`rerank.provider '${provider}' is not configured on this server (available: ${known})`);
    }
    if (model !== undefined && p.models && !p.models.includes(model)) {
      bad(`rerank.model '${model}' is not offered by provider '${provider}' (available: ${p.models.join(', ')})`);
    }
    model ??= p.defaultModel;
  }
  return { enabled: true, provider, model: model ?? '', top_n: topN, max_documents: maxDocuments, fail_open: failOpen };
}

function bad(message: string): never {
  throw new ApiError('invalid_request', message);
}

function asObject(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('rerank must be a boolean or an object');
  return raw as Record<string, unknown>;
}

function optString(o: Record<string, unknown>, key: string): string | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.trim() === '') bad(`rerank.${key} must be a non-empty string`);
  return v;
}

function optInt(o: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) bad(`rerank.${key} must be an integer from ${min} to ${max}`);
  return v;
}
