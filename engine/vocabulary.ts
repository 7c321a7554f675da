/**
 * The engine's enumerations, defined once: every layer (request schemas, the OpenAPI document,
 * the dataset catalog) imports them from here, and `native.ts` checks at load that the native
 * core knows exactly these names (the binding exports its own).
 */
import { invalid } from '../errors/codes.js';

export const METRICS = ['cosine', 'l2', 'ip'] as const;
export type Metric = (typeof METRICS)[number];

export const INDEX_TYPES = ['sable', 'hnsw', 'ivf', 'flat'] as const;
export type IndexType = (typeof INDEX_TYPES)[number];

/** Typed metadata columns of the engine (`string` is dictionary coded). */
export const COLUMN_TYPES = ['u32', 'i32', 'i64', 'f32', 'f64', 'string', 'bool'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

/** A search's top-k: its ceiling, and the k of a search that names none. */
export const MAX_TOP_K = 10_000;
export const DEFAULT_TOP_K = 10;

/** Operators of an advanced filter. */
export const FILTER_OPS = ['eq', 'gt', 'gte', 'lt', 'lte', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];
/** Range operators: they need a numeric column. */
export const RANGE_OPS = ['gt', 'gte', 'lt', 'lte'] as const satisfies readonly FilterOp[];

/** Predicates the native core evaluates: the filter operators and a null test. */
export const PREDICATE_OPS = [...FILTER_OPS, 'is_null'] as const;
export type PredicateOp = (typeof PREDICATE_OPS)[number];

/** Throws when the native core's names differ from these (a build out of step with the code). */
export function checkNativeVocabulary(native: { metrics: string[]; indexTypes: string[]; columnTypes: string[]; predicateOps: string[] }): void {
  const pairs: [string, readonly string[], string[]][] = [
    ['metrics', METRICS, native.metrics],
    ['index types', INDEX_TYPES, native.indexTypes],
    ['column types', COLUMN_TYPES, native.columnTypes],
    ['predicate operators', PREDICATE_OPS, native.predicateOps],
  ];
  for (const [what, ours, theirs] of pairs) {
    if (ours.length !== theirs.length || ours.some((n) => !theirs.includes(n))) {
      throw new Error(`the native addon's ${what} (${theirs.join(', ')}) differ from engine/vocabulary.ts (${ours.join(', ')}): rebuild it`);
    }
  }
}

/** "a, b or c": the expected values of an enumeration, for messages. */
export function listOf(values: readonly string[]): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}

export function checkMetric(m: string): asserts m is Metric {
  if (!(METRICS as readonly string[]).includes(m)) throw invalid(`unknown metric '${m}' (expected ${listOf(METRICS)})`);
}

export function checkIndexType(t: string): asserts t is IndexType {
  if (!(INDEX_TYPES as readonly string[]).includes(t)) throw invalid(`unknown index type '${t}' (expected ${listOf(INDEX_TYPES)})`);
}

export function checkColumnType(name: string, type: string): asserts type is ColumnType {
  if (!(COLUMN_TYPES as readonly string[]).includes(type)) {
    throw invalid(`column '${name}' has unknown type '${type}' (expected ${listOf(COLUMN_TYPES)})`);
  }
}
