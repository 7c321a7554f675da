/** Schema rules of the contract: canonical types, aliases, names, limits, merge and replace. */
import { badRequest } from '../../errors/codes.js';
import type { Observations, SchemaEntry, SchemaType } from './record.js';

const ALIASES: Record<string, SchemaType> = {
  string: 'string', text: 'string', str: 'string',
  u32: 'u32', uint32: 'u32',
  i32: 'i32', int: 'i32', int32: 'i32',
  i64: 'i64', int64: 'i64', long: 'i64', timestamp: 'i64',
  f32: 'f32', float: 'f32', float32: 'f32',
  f64: 'f64', double: 'f64', float64: 'f64', number: 'f64',
};
const NAME = /^[A-Za-z0-9_.\-]{1,128}$/;
export const MAX_FIELDS = 128;
/**
 * The document's own text is what a search returns, never something to filter on by equality:
 * it is not inferred into a filter column (where every chunk of text would be held in memory
 * again); a schema may still declare it.
 */
const NEVER_INFERRED = new Set(['text', 'doc_value']);
/** Values seen before a field may be promoted from observed data, and the agreement needed. */
const PROMOTE_SAMPLES = 20;
const PROMOTE_CONFIDENCE = 0.95;

/** Validates and normalises declared fields (body `schema` or its aliases). */
export function normalizeFields(fields: unknown): { name: string; type: SchemaType }[] {
  if (!Array.isArray(fields)) throw badRequest('schema must be an array of {name, type}');
  const seen = new Set<string>();
  return fields.map((f, i) => {
    const name = (f as { name?: unknown })?.name;
    const type = (f as { type?: unknown })?.type;
    if (typeof name !== 'string' || name === '') throw badRequest(`schema[${i}].name is empty`);
    if (!NAME.test(name)) throw badRequest(`schema field name '${name}' must be 1-128 letters, digits, _ - .`);
    if (seen.has(name)) throw badRequest(`schema field '${name}' is declared twice`);
    seen.add(name);
    const canonical = typeof type === 'string' ? ALIASES[type.toLowerCase()] : undefined;
    if (!canonical) throw badRequest(`schema field '${name}' has unsupported type '${String(type)}'`);
    return { name, type: canonical };
  });
}

/** The body's schema under any of its accepted names. */
export function schemaOfBody(body: { schema?: unknown; metadata_schema?: unknown; metadata_fields?: unknown }): unknown {
  return body.schema ?? body.metadata_schema ?? body.metadata_fields;
}

export function applySchema(current: SchemaEntry[], fields: { name: string; type: SchemaType }[], mode: 'merge' | 'replace'): SchemaEntry[] {
  const declared: SchemaEntry[] = fields.map((f) => ({ name: f.name, type: f.type, source: 'user' }));
  let next: SchemaEntry[];
  if (mode === 'replace') next = declared;
  else {
    const byName = new Map(current.map((e) => [e.name, e]));
    for (const d of declared) byName.set(d.name, d);
    next = [...byName.values()];
  }
  if (next.length > MAX_FIELDS) throw badRequest(`a schema holds at most ${MAX_FIELDS} fields`);
  return next;
}

/** Adds counts observed elsewhere (a bulk load counts its columns without per-row objects). */
export function addObservations(obs: Observations, counts: Observations): void {
  for (const [k, c] of Object.entries(counts)) {
    const o = (obs[k] ??= { integer: 0, float: 0, string: 0, other: 0 });
    o.integer += c.integer;
    o.float += c.float;
    o.string += c.string;
    o.other += c.other;
  }
}

/** Counts metadata value kinds of an insert batch into the observations. */
export function observe(obs: Observations, metadata: Record<string, unknown>[]): void {
  for (const m of metadata) {
    for (const [k, v] of Object.entries(m)) {
      if (v === null || v === undefined) continue;
      const o = (obs[k] ??= { integer: 0, float: 0, string: 0, other: 0 });
      if (typeof v === 'number') Number.isInteger(v) ? o.integer++ : o.float++;
      else if (typeof v === 'string') o.string++;
      else o.other++;
    }
  }
}

/** Inferred entries for undeclared fields whose observed values agree on a type. */
export function promotions(schema: SchemaEntry[], obs: Observations): SchemaEntry[] {
  const out: SchemaEntry[] = [];
  const taken = new Set(schema.map((e) => e.name));
  for (const [name, o] of Object.entries(obs)) {
    if (taken.has(name) || NEVER_INFERRED.has(name) || !NAME.test(name) || schema.length + out.length >= MAX_FIELDS) continue;
    const samples = o.integer + o.float + o.string + o.other;
    if (samples < PROMOTE_SAMPLES) continue;
    const numeric = o.integer + o.float;
    let type: SchemaType | undefined;
    let agree = 0;
    if (numeric >= o.string && numeric >= o.other) {
      type = o.float > 0 ? 'f64' : 'i64';
      agree = numeric;
    } else if (o.string >= o.other) {
      type = 'string';
      agree = o.string;
    }
    const confidence = agree / samples;
    if (type && confidence >= PROMOTE_CONFIDENCE) out.push({ name, type, source: 'inferred', confidence: round(confidence), samples });
  }
  return out;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
