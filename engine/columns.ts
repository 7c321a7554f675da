/**
 * Metadata to typed filter columns. Numbers, strings and booleans of a key become one column
 * whose type is declared (schema) or taken from the first value seen; strings are dictionary
 * coded. A value that does not fit its column's type is a null in the column (the metadata itself
 * is stored unchanged).
 */
import type { ColumnType, NativeColumnBatch } from './native.js';
import type { Metadata, Scalar } from './types.js';

export class Dictionary {
  private readonly codes = new Map<string, number>();
  private next = 0;

  /** Restores a stored entry (codes are not dense in storage order). */
  restore(value: string, code: number): void {
    this.codes.set(value, code);
    this.next = Math.max(this.next, code + 1);
  }

  get(value: string): number | undefined {
    return this.codes.get(value);
  }

  get size(): number {
    return this.codes.size;
  }

  /** Every value coded so far (values of deleted rows included: codes are never reused). */
  values(): string[] {
    return [...this.codes.keys()];
  }

  /** The code of `value`, assigning the next one (reported through `added`) when new. */
  intern(value: string, added: [string, number][]): number {
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.next++;
      this.codes.set(value, code);
      added.push([value, code]);
    }
    return code;
  }
}

export function inferColumnType(value: Scalar): ColumnType | undefined {
  if (typeof value === 'number') return 'f64';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  return undefined;
}

/** The column value of `v` for `type`, or undefined when it does not fit. Numeric columns take
 * numeric-looking strings too: a field declared numeric is compared as a number. */
export function toColumnNumber(type: ColumnType, raw: Scalar, dict: Dictionary | undefined): number | undefined {
  const v = typeof raw === 'string' && type !== 'string' && type !== 'bool' && raw.trim() !== '' ? Number(raw) : raw;
  switch (type) {
    case 'string':
      if (typeof raw === 'string') return dict?.get(raw);
      return undefined;
    case 'bool':
      return typeof raw === 'boolean' ? (raw ? 1 : 0) : undefined;
    case 'u32':
      return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff ? v : undefined;
    case 'i32':
      return typeof v === 'number' && Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff ? v : undefined;
    case 'i64':
      return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined;
    case 'f32':
    case 'f64':
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  }
}

function allocate(type: ColumnType, n: number): NativeColumnBatch['values'] {
  switch (type) {
    case 'u32':
    case 'string':
      return new Uint32Array(n);
    case 'i32':
      return new Int32Array(n);
    case 'i64':
      return new BigInt64Array(n);
    case 'f32':
      return new Float32Array(n);
    case 'f64':
      return new Float64Array(n);
    case 'bool':
      return new Uint8Array(n);
  }
}

export interface ColumnContext {
  /** Column types of the dataset; new keys are added here. */
  types: Record<string, ColumnType>;
  dictionaries: Map<string, Dictionary>;
}

export interface ColumnBatchResult {
  batches: NativeColumnBatch[];
  newTypes: [string, ColumnType][];
  newCodes: [string, string, number][];
}

/** The document text is searched by keywords, never filtered on: no column, no dictionary. */
export const TEXT_FIELD = 'text';
/** Longer strings are not dictionary coded (a filter on them matches nothing): they are prose. */
const MAX_FILTER_STRING = 512;

/** Column batches for the rows' metadata (rows without metadata are nulls everywhere). */
export function columnBatches(ctx: ColumnContext, metadata: (Metadata | undefined)[]): ColumnBatchResult {
  const newTypes: [string, ColumnType][] = [];
  const newCodes: [string, string, number][] = [];
  const names = new Set<string>();
  for (const m of metadata) if (m) for (const k of Object.keys(m)) if (k !== TEXT_FIELD) names.add(k);
  const batches: NativeColumnBatch[] = [];
  for (const name of names) {
    let type = ctx.types[name];
    if (!type) {
      for (const m of metadata) {
        const t = m ? inferColumnType(m[name] ?? null) : undefined;
        if (t) {
          type = t;
          break;
        }
      }
      if (!type) continue;
      ctx.types[name] = type;
      newTypes.push([name, type]);
    }
    let dict = ctx.dictionaries.get(name);
    if (type === 'string' && !dict) {
      dict = new Dictionary();
      ctx.dictionaries.set(name, dict);
    }
    const values = allocate(type, metadata.length);
    const valid = new Uint8Array(metadata.length);
    const added: [string, number][] = [];
    metadata.forEach((m, i) => {
      const raw = m?.[name];
      if (raw === undefined || raw === null) return;
      if (type === 'string' && typeof raw === 'string') {
        if (raw.length > MAX_FILTER_STRING) return;
        dict!.intern(raw, added);
      }
      const x = toColumnNumber(type!, raw, dict);
      if (x === undefined) return;
      if (values instanceof BigInt64Array) values[i] = BigInt(x);
      else values[i] = x;
      valid[i] = 1;
    });
    for (const [v, c] of added) newCodes.push([name, v, c]);
    batches.push({ name, type, values, valid });
  }
  return { batches, newTypes, newCodes };
}
