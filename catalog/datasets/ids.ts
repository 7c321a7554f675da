/**
 * String ids map to integers with 64-bit FNV-1a over the UTF-8 bytes, masked to the low 53 bits
 * so the result is a safe JSON integer (the API's id rule: README.md, "A first search with curl").
 */
const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK64 = (1n << 64n) - 1n;
const MASK53 = (1n << 53n) - 1n;

export function fnv1a53(s: string): number {
  let h = OFFSET;
  for (const byte of Buffer.from(s, 'utf8')) {
    h ^= BigInt(byte);
    h = (h * PRIME) & MASK64;
  }
  return Number(h & MASK53);
}

/** An id as the API accepts it: a safe non-negative integer, or a string hashed to one. */
export function toInternalId(id: unknown): { id: number; external?: string } | undefined {
  if (typeof id === "number") return Number.isSafeInteger(id) ? { id } : undefined;
  if (typeof id === 'string' && id.length > 0) return { id: fnv1a53(id), external: id };
  return undefined;
}
