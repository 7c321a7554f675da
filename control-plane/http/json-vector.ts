/**
 * A JSON body whose top-level vector field (a search's `query`) is read straight into a
 * Float32Array. JSON.parse builds a JS array of doubles first: for 768 numbers written as
 * JavaScript prints float32 values (17 digits) that was 70 µs, most of a JSON search's own cost,
 * and a scanner in TypeScript still took 40 to 60 µs (bench/results/http.md). The engine's
 * native reader gives the same values as JSON.parse followed by Float32Array.from; a field that
 * is not a plain array of JSON numbers goes the JSON.parse way.
 */
import { readDecimalVector } from '../../engine/index.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** JSON.parse of `body`, with `field` (when a top-level array of numbers) as a Float32Array. */
export function parseJsonWithVector(body: Buffer, field: string): unknown {
  const at = vectorStart(body, field);
  if (at >= 0) {
    const parsed = readDecimalVector(body, at);
    if (parsed) {
      const rest = body.toString('utf8', 0, at) + '[]' + body.toString('utf8', parsed.end);
      const value = JSON.parse(rest) as Record<string, unknown>;
      // A repeated key: JSON.parse keeps the last one, and so does this.
      const kept = value[field];
      if (Array.isArray(kept) && kept.length === 0) value[field] = parsed.values;
      return value;
    }
  }
  return JSON.parse(body.toString('utf8'));
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Where the `[` of the top-level key's array is, or -1. The key is looked up as text, then the
 * text before it is scanned for strings and nesting, so a `"query"` inside a string or a nested
 * object is not taken for it.
 */
function vectorStart(body: Buffer, field: string): number {
  const needle = `"${field}"`;
  let from = 0;
  for (;;) {
    const k = body.indexOf(needle, from, 'latin1');
    if (k < 0) return -1;
    from = k + 1;
    if (!topLevelKeyAt(body, k)) continue;
    let i = k + needle.length;
    while (i < body.length && isSpace(body[i]!)) i++;
    if (body[i] !== COLON) continue;
    i++;
    while (i < body.length && isSpace(body[i]!)) i++;
    return body[i] === OPEN_BRACKET ? i : -1;
  }
}

/** Whether position `k` (a quote) opens a key of the top-level object. */
function topLevelKeyAt(body: Buffer, k: number): boolean {
  let depth = 0;
  let last = -1;
  for (let i = 0; i < k; i++) {
    const c = body[i]!;
    if (c === QUOTE) {
      i++;
      while (i < k && body[i] !== QUOTE) i += body[i] === BACKSLASH ? 2 : 1;
      if (i >= k) return false;
      last = QUOTE;
      continue;
    }
    if (isSpace(c)) continue;
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
    last = c;
  }
  return depth === 1 && (last === OPEN_BRACE || last === COMMA);
}
