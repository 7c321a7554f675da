/**
 * The service's names the forms offer. The dashboard imports client/ only, so these repeat the
 * engine's vocabulary (engine/vocabulary.ts) and the schema's canonical types
 * (catalog/datasets/schema.ts); a name the service stops taking comes back as its 400, in its words.
 */

export const METRICS = ['cosine', 'l2', 'ip'] as const;

/** Canonical types a schema field is declared with. */
export const FIELD_TYPES = ['string', 'i64', 'i32', 'u32', 'f64', 'f32'] as const;

/** Embedding providers a dataset may name (empty: the service's default, the local model unless a managed server is set). */
export const EMBEDDING_PROVIDERS = ['local', 'openai', 'cohere', 'openai-compatible', 'managed'] as const;

export type FilterOp = 'eq' | 'gt' | 'gte' | 'lt' | 'lte' | 'in';

/** Range operators need a numeric column; a string column takes equality and `in`. */
export function opsFor(type: string): FilterOp[] {
  return type === 'string' || type === 'bool' ? ['eq', 'in'] : ['eq', 'gt', 'gte', 'lt', 'lte', 'in'];
}

export function isIntegerType(type: string): boolean {
  return type === 'i64' || type === 'i32' || type === 'u32';
}

export function isNumericType(type: string): boolean {
  return isIntegerType(type) || type === 'f64' || type === 'f32';
}

export const OP_LABELS: Record<FilterOp, string> = { eq: '=', gt: '>', gte: '≥', lt: '<', lte: '≤', in: 'in (comma separated)' };
