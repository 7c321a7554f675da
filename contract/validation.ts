/**
 * Values checked against their schemas (ajv, compiled once), with messages a caller can act on:
 * the field's path and what it must be, read from the schema itself ("rerank.top_n must be an
 * integer from 1 to 10000", "rerank must be a boolean or an object"). Request bodies (the HTTP
 * router) and source configs (defaults filled in) are checked this way.
 */
import { Ajv, type ErrorObject } from 'ajv';

const FORMATS = {
  uri: /^[a-z][a-z0-9+.-]*:\/\/\S+$/i,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  'date-time': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
};
const ajv = new Ajv({ allErrors: false, strict: false, verbose: true, formats: FORMATS });
const withDefaults = new Ajv({ allErrors: false, strict: false, verbose: true, formats: FORMATS, useDefaults: true });
// Query strings and headers are text: "50" is the integer 50, "true" the boolean.
const coercing = new Ajv({ allErrors: false, strict: false, verbose: true, formats: FORMATS, useDefaults: true, coerceTypes: true });

/** A compiled check: the first problem of a value as a message, or null when it is valid. */
export type BodyCheck = (body: unknown) => string | null;

/**
 * `fillDefaults`: missing fields with a default in the schema are set on the value checked.
 * `closed`: a field the schema does not name is refused, by name (`topK` for `top_k` was ignored).
 */
export function compileBody(schema: object, opts: { fillDefaults?: boolean; root?: string; closed?: boolean } = {}): BodyCheck {
  const validate = (opts.fillDefaults ? withDefaults : ajv).compile(opts.closed ? (closedSchema(schema) as object) : schema);
  return (body) => (validate(body) ? null : describe(validate.errors ?? [], opts.root ?? 'body'));
}

/** A compiled check of named text values (a query string, headers): typed values with defaults, or the first problem. */
export type TextCheck = (get: (name: string) => string | null | undefined) => { value: Record<string, unknown>; problem: string | null };

/** `root` names where the values come from in messages ("query.limit must be ..."). */
export function compileText(schema: { properties?: Record<string, unknown> }, root: string): TextCheck {
  const validate = coercing.compile(schema);
  const names = Object.keys(schema.properties ?? {});
  return (get) => {
    const value: Record<string, unknown> = {};
    for (const name of names) {
      const v = get(name);
      if (v !== null && v !== undefined) value[name] = v;
    }
    return validate(value) ? { value, problem: null } : { value, problem: describe(validate.errors ?? [], root) };
  };
}

type Schema = Record<string, unknown>;

/**
 * A copy of `schema` in which every object that lists its properties and says nothing of others
 * refuses others: the schema's own objects and those of its properties and items. Alternatives
 * (anyOf, oneOf, allOf) are left open, as each names only part of the fields.
 */
function closedSchema(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const s = schema as Schema;
  const out: Schema = { ...s };
  if (s.properties && typeof s.properties === 'object') {
    out.properties = Object.fromEntries(Object.entries(s.properties as Schema).map(([k, v]) => [k, closedSchema(v)]));
    if (s.additionalProperties === undefined && s.patternProperties === undefined) out.additionalProperties = false;
  }
  if (s.items !== undefined) out.items = closedSchema(s.items);
  return out;
}

/** The most specific error (the deepest path), described from the schema that refused it. */
function describe(errors: ErrorObject[], root: string): string {
  if (errors.length === 0) return 'body is invalid';
  // A union whose alternatives each fix one field (source_type): the alternative the value names says what is wrong.
  for (const e of errors) {
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') continue;
    const picked = alternativeOf(e, errors);
    if (picked === null) continue;
    if (typeof picked === 'string') return `${root === 'body' ? '' : `${root}.`}${picked}`;
    if (picked.length > 0) return describe(picked, root);
  }
  const depth = (e: ErrorObject) => (e.instancePath === '' ? 0 : e.instancePath.split('/').length);
  const deepest = Math.max(...errors.map(depth));
  const candidates = errors.filter((e) => depth(e) === deepest);
  // Among errors at one path, a union's own error says more than one branch's.
  const e = candidates.find((x) => x.keyword === 'anyOf' || x.keyword === 'oneOf') ?? candidates[0];
  const path = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : '';
  const where = root === 'body' ? path || 'body' : path ? `${root}.${path}` : root;
  if (e.keyword === 'required') return `${where === 'body' ? '' : `${where}.`}${(e.params as { missingProperty: string }).missingProperty} is required`;
  if (e.keyword === 'additionalProperties') {
    const known = Object.keys(((e.parentSchema ?? {}) as Schema).properties ?? {});
    return `${where} has an unknown field '${(e.params as { additionalProperty: string }).additionalProperty}'${known.length ? ` (its fields: ${known.join(', ')})` : ''}`;
  }
  return `${where} ${mustBe(e)}`;
}

/**
 * For a union of objects that each fix a field to a constant: the errors of the alternative the
 * value's field names, or what the field must be when it names none; null for other unions.
 */
function alternativeOf(e: ErrorObject, errors: ErrorObject[]): ErrorObject[] | string | null {
  const branches = ((e.parentSchema ?? {}) as Schema)[e.keyword] as Schema[] | undefined;
  const constOf = (b: Schema, k: string) => ((b.properties as Record<string, Schema> | undefined)?.[k]?.const as unknown);
  const key = branches?.[0]?.properties ? Object.keys(branches[0].properties as Schema).find((k) => branches.every((b) => constOf(b, k) !== undefined)) : undefined;
  if (!branches || key === undefined || typeof e.data !== 'object' || e.data === null) return null;
  const value = (e.data as Record<string, unknown>)[key];
  const i = branches.findIndex((b) => constOf(b, key) === value);
  const at = e.instancePath ? `${e.instancePath.slice(1).replaceAll('/', '.')}.` : '';
  if (i < 0) return `${at}${key} must be one of ${branches.map((b) => String(constOf(b, key))).join(', ')}`;
  return errors.filter((x) => x.schemaPath.startsWith(`${e.schemaPath}/${i}/`));
}

function mustBe(e: ErrorObject): string {
  const schema = (e.parentSchema ?? {}) as Schema;
  switch (e.keyword) {
    case 'type':
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'minLength':
    case 'multipleOf':
      return `must be ${kindOf(schema)}`;
    case 'enum':
      return `must be one of ${(schema.enum as unknown[]).map(String).join(', ')}`;
    case 'format':
    case 'pattern':
      return schema.format === 'uri' || /https\?/.test(String(schema.pattern ?? '')) ? 'must be an http(s) URL' : `must match ${String(schema.format ?? schema.pattern)}`;
    case 'anyOf':
    case 'oneOf': {
      const all = schema[e.keyword] as Schema[];
      // Alternatives of required fields ({anyOf: [{required: [a]}, {required: [b]}]}): name them.
      const needs = all.map((b) => b.required as string[] | undefined);
      if (needs.every((r) => Array.isArray(r) && r.length > 0)) return `needs ${needs.map((r) => r!.join(' and ')).join(' or ')}`;
      const branches = all.filter((b) => b.type !== undefined || b.enum !== undefined);
      if (branches.length === 0) return e.keyword === 'oneOf' ? 'must match exactly one of its allowed forms' : 'does not match any allowed form';
      return `must be ${[...new Set(branches.map(kindOf))].join(' or ')}`;
    }
    case 'minItems':
    case 'maxItems':
      return `must hold ${schema.minItems ?? 0} to ${schema.maxItems ?? 'any number of'} items`;
    case 'maxLength':
      return `must be at most ${schema.maxLength} characters`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** "a boolean", "a non-empty string", "an integer from 1 to 10", "null", from a schema. */
function kindOf(s: Schema): string {
  if (Array.isArray(s.enum)) return `one of ${s.enum.map(String).join(', ')}`;
  const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  return types.map((t) => describeType(t, s)).join(' or ');
}

function describeType(t: string, s: Schema): string {
  const range = s.minimum !== undefined && s.maximum !== undefined ? ` from ${s.minimum} to ${s.maximum}` : s.minimum !== undefined ? ` of at least ${s.minimum}` : s.maximum !== undefined ? ` of at most ${s.maximum}` : '';
  switch (t) {
    case 'integer':
      return `an integer${range}`;
    case 'number':
      return `a number${range}`;
    case 'string':
      return s.minLength === 1 ? 'a non-empty string' : 'a string';
    case 'array':
      return 'an array';
    case 'object':
      return 'an object';
    case 'boolean':
      return 'a boolean';
    case 'null':
      return 'null';
    default:
      return String(t);
  }
}
