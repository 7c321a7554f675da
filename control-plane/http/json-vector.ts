/**
 * A JSON body whose top-level vector field (a search's `query`) is read straight into a
 * Float32Array. JSON.parse builds a JS array of doubles first, through V8's correctly rounding
 * strtod: for 768 numbers written as JavaScript prints float32 values (17 digits) that was 70 µs,
 * most of a JSON search's own cost (bench/results/http.md). Here each number is scanned once and
 * rounded to float32 with the same result as JSON.parse followed by Float32Array.from; numbers
 * too close to a float32 rounding boundary for the fast conversion to be sure, and anything that
 * is not a plain array of JSON numbers, go the JSON.parse way.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** 10^0 .. 10^22: exactly representable as doubles, so one multiplication rounds once. */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** JSON.parse of `body`, with `field` (when a top-level array of numbers) as a Float32Array. */
export function parseJsonWithVector(body: Buffer, field: string): unknown {
  const at = vectorStart(body, field);
  if (at >= 0) {
    const parsed = readVector(body, at);
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

/** Values read before the array is cut to its length (grown when a vector is longer). */
let scratch = new Float32Array(4096);

/**
 * The numbers of the array opening at `open` and the index after its `]`, in one pass (strict
 * JSON number grammar); null when it holds anything but numbers.
 */
function readVector(b: Buffer, open: number): { values: Float32Array; end: number } | null {
  const len = b.length;
  let i = open + 1;
  let n = 0;
  while (i < len && isSpace(b[i]!)) i++;
  if (b[i] === CLOSE_BRACKET) return { values: new Float32Array(0), end: i + 1 };
  for (;;) {
    while (i < len && isSpace(b[i]!)) i++;
    const start = i;
    let c = b[i]!;
    const negative = c === MINUS;
    if (negative) c = b[++i]!;
    // Digits as an integer (the first 19 significant ones) and the power of ten they are scaled
    // by. They gather nine at a time in a small integer: a double multiply-add per digit is a
    // dependency chain that cost more than all the rest.
    let high = 0;
    let low = 0;
    let lowDigits = 0;
    let kept = 0;
    let scale = 0;
    const intStart = i;
    while (c >= ZERO && c <= NINE) {
      if (kept < 19) {
        low = low * 10 + (c - ZERO);
        if (kept !== 0 || c !== ZERO) kept++;
        if (++lowDigits === 9) {
          high = high * 1e9 + low;
          low = 0;
          lowDigits = 0;
        }
      } else scale++;
      c = b[++i]!;
    }
    if (i === intStart || (i - intStart > 1 && b[intStart] === ZERO)) return null;
    if (c === DOT) {
      c = b[++i]!;
      const fracStart = i;
      while (c >= ZERO && c <= NINE) {
        if (kept < 19) {
          low = low * 10 + (c - ZERO);
          scale--;
          if (kept !== 0 || c !== ZERO) kept++;
          if (++lowDigits === 9) {
            high = high * 1e9 + low;
            low = 0;
            lowDigits = 0;
          }
        }
        c = b[++i]!;
      }
      if (i === fracStart) return null;
    }
    if (c === 0x65 || c === 0x45) {
      c = b[++i]!;
      let expNegative = false;
      if (c === PLUS || c === MINUS) {
        expNegative = c === MINUS;
        c = b[++i]!;
      }
      const expStart = i;
      let exp = 0;
      while (c >= ZERO && c <= NINE) {
        if (exp < 100_000) exp = exp * 10 + (c - ZERO);
        c = b[++i]!;
      }
      if (i === expStart) return null;
      scale += expNegative ? -exp : exp;
    }
    if (i >= len) return null;
    if (n === scratch.length) {
      const grown = new Float32Array(scratch.length * 2);
      grown.set(scratch);
      scratch = grown;
    }
    scratch[n++] = toFloat32(high * POW10[lowDigits]! + low, scale, negative, b, start, i);
    while (i < len && isSpace(b[i]!)) i++;
    c = b[i]!;
    if (c === CLOSE_BRACKET) return { values: scratch.slice(0, n), end: i + 1 };
    if (c !== COMMA) return null;
    i++;
  }
}

/**
 * The float32 of mantissa * 10^scale: one rounding of an integer of up to 19 digits and one of
 * the scaling leave the double a few units in its last place from the decimal; when that is
 * close enough to a midpoint between two float32 values to matter, the exact conversion of the
 * text in body[start, end) decides.
 */
function toFloat32(mantissa: number, scale: number, negative: boolean, body: Buffer, start: number, end: number): number {
  if (mantissa === 0) return negative ? -0 : 0;
  if (scale < -22 || scale > 22) return exact(body, start, end);
  const d = scale >= 0 ? mantissa * POW10[scale]! : mantissa / POW10[-scale]!;
  f32[0] = d;
  const f = f32[0]!;
  // Normal float32 range only; the neighbours of f give the two rounding midpoints around it.
  if (!(f >= 1.1754943508222875e-38 && f < 3.4e38)) return exact(body, start, end);
  const bits = u32[0]!;
  u32[0] = bits + 1;
  const up = f32[0]!;
  u32[0] = bits - 1;
  const down = f32[0]!;
  const margin = d * 2 ** -48;
  if (Math.abs(d - (f + up) / 2) < margin || Math.abs(d - (f + down) / 2) < margin) return exact(body, start, end);
  return negative ? -f : f;
}

function exact(body: Buffer, start: number, end: number): number {
  return Math.fround(Number(body.toString('latin1', start, end)));
}
