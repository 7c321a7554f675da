/**
 * Building blocks of the request and answer schemas (TypeBox) that every layer's schemas share:
 * the dataset catalog's, the retrieval use-cases', the HTTP layer's.
 */
import { Type, type Static } from '@sinclair/typebox';

/** A string enumeration as JSON Schema's `enum` (clearer errors and OpenAPI than anyOf of consts). */
export function StringEnum<T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A metadata value: string, number, boolean or null. */
export const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
export type Scalar = Static<typeof Scalar>;
