// JSON Schema (the TypeBox subset the route table uses) to fast-check arbitraries: values that
// follow a request schema, so a request gets past the validator into the handler, and mutations
// of them (a field dropped, a node of the wrong type or an extreme value, an unknown field) that
// a validator or a handler must refuse with a 4xx.
import fc from 'fast-check';

export type Schema = { [k: string]: any };

/**
 * Values for properties of a name whose meaning the service checks beyond the schema (ids of
 * seeded resources, cron expressions, vectors of the datasets' dimensions); `schema` is the
 * property's, so a name means one thing only where the schema agrees.
 */
export type Hints = (property: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;

const MAX_STRING = 40;
const MAX_ITEMS = 5;
const INT32 = 2 ** 31 - 1;

/** A URL that names loopback only: any other host would make the service reach out. */
export const localUrl = fc.constantFrom(
  'http://127.0.0.1:9/',
  'https://127.0.0.1:9/a/b?c=d',
  'http://localhost:9/x.pdf',
  'http://[::1]:9/',
  'http://127.0.0.1:9/../../etc/passwd',
  'http://127.0.0.1:9/%2e%2e/%00',
);

const URL_NAMES = /url|endpoint|uri|href/i;

export function validOf(schema: Schema, hints: Hints = () => undefined, name = ''): fc.Arbitrary<unknown> {
  const hinted = name ? hints(name, schema) : undefined;
  if (hinted) return hinted;
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) {
    const { anyOf: _a, oneOf: _o, ...base } = schema;
    const standalone = base.type === undefined && base.properties === undefined;
    return fc.oneof(...union.map((b: Schema) => validOf(standalone ? b : merge(base, b), hints, name)));
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  switch (schema.type) {
    case 'string':
      return stringOf(schema, hints, name);
    case 'integer':
      return integerOf(schema.minimum, schema.maximum);
    case 'number':
      return fc.double({ min: schema.minimum, max: schema.maximum, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validOf(schema.items ?? {}, hints, name), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS)),
      });
    case 'object':
      return objectOf(schema, hints);
    default:
      return schema.properties ? objectOf(schema, hints) : fc.jsonValue({ maxDepth: 2 });
  }
}

function merge(a: Schema, b: Schema): Schema {
  const properties: Schema = { ...(a.properties ?? {}) };
  for (const [k, v] of Object.entries((b.properties ?? {}) as Schema)) properties[k] = properties[k] ? merge(properties[k], v) : v;
  return { ...a, ...b, properties, required: [...new Set([...(a.required ?? []), ...(b.required ?? [])])] };
}

function stringOf(s: Schema, _hints: Hints, name: string): fc.Arbitrary<string> {
  if (s.format === 'uri' || /https\?/.test(s.pattern ?? '') || URL_NAMES.test(name)) return localUrl;
  if (s.format === 'uuid') return fc.uuid();
  if (s.format === 'date-time') return fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString());
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern));
  const minLength = s.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? MAX_STRING, MAX_STRING));
  return fc.oneof(
    fc.string({ minLength, maxLength, unit: 'grapheme' }),
    fc.string({ minLength, maxLength, unit: 'binary' }),
    fc.string({ minLength, maxLength, unit: 'grapheme-ascii' }),
  );
}

function integerOf(min = -Number.MAX_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): fc.Arbitrary<number> {
  if (min >= -INT32 && max <= INT32) return fc.integer({ min, max });
  return fc.oneof(
    fc.integer({ min: Math.max(min, -INT32), max: Math.min(max, INT32) }),
    fc.constantFrom(min, max),
    fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number),
  );
}

function objectOf(s: Schema, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const props: Record<string, Schema> = s.properties ?? {};
  const required: string[] = s.required ?? [];
  const open = s.patternProperties ? Object.values(s.patternProperties as Schema)[0] : undefined;
  if (Object.keys(props).length === 0 && required.length === 0) {
    return fc.dictionary(fc.string({ maxLength: 12 }), open ? validOf(open, hints) : fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) as fc.Arbitrary<Record<string, unknown>>;
  }
  const arbs: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) arbs[k] = validOf(v, hints, k);
  for (const k of required) arbs[k] ??= fc.jsonValue({ maxDepth: 1 });
  const requiredKeys = required.filter((k) => k in arbs);
  const optional = Object.keys(arbs).filter((k) => !requiredKeys.includes(k));
  // Bodies with every option drawn mostly trip over one of them (two options that exclude each
  // other, a provider that does not exist): half carry at most two, so the handler's deeper paths run.
  const few = fc.subarray(optional, { maxLength: Math.min(2, optional.length) }).chain((keys) =>
    fc.record(Object.fromEntries([...requiredKeys, ...keys].map((k) => [k, arbs[k]!]))),
  );
  return fc.oneof(fc.record(arbs, { requiredKeys }), few);
}

/** Values no schema of ours takes where it expects something else, and values at the edges. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null, true, false, 0, -1, 1.5, -0, 2 ** 53 + 2, -(2 ** 53) - 2, 1e308, -1e308, 5e-324, 2 ** 31, 2 ** 32, 2 ** 64,
    '', ' ', '\u0000', '\ud800', '\udfff\ud800', '../../../../etc/passwd', '..\\..\\admin.key', '%00', '%ZZ', '<script>alert(1)</script>',
    '${jndi:ldap://127.0.0.1:9/a}', "'; DROP TABLE datasets; --", 'NaN', 'Infinity', '-0', '1e400', 'null', 'true',
    'a\r\nSet-Cookie: x=1', 'x'.repeat(70_000), [], {}, [[]], [null], [1, 'a', null, {}],
    JSON.parse('{"__proto__":{"polluted":true}}'), { constructor: { prototype: { polluted: true } } },
  ),
  fc.jsonValue({ maxDepth: 3 }),
  fc.nat({ max: 200 }).map((d) => nested(d)),
);

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

type Path = (string | number)[];

/** Every node of a JSON value, by path (the root is []). */
function nodes(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => nodes(x, [...at, i], out));
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) nodes((v as Record<string, unknown>)[k], [...at, k], out);
  return out;
}

function objects(v: unknown): Path[] {
  return nodes(v).filter((p) => {
    const x = get(v, p);
    return x !== null && typeof x === 'object' && !Array.isArray(x);
  });
}

function get(v: unknown, p: Path): unknown {
  return p.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)?.[k], v);
}

function set(root: unknown, p: Path, value: unknown): unknown {
  if (p.length === 0) return value;
  const parent = get(root, p.slice(0, -1)) as Record<string | number, unknown>;
  parent[p.at(-1)!] = value;
  return root;
}

export type Mutation = 'drop' | 'retype' | 'extra' | 'root';

/** A value of the schema, then broken in one place. */
export function mutatedOf(schema: Schema, hints: Hints = () => undefined): fc.Arbitrary<{ value: unknown; mutation: Mutation }> {
  return fc
    .tuple(validOf(schema, hints), fc.constantFrom<Mutation>('drop', 'retype', 'retype', 'extra', 'root'), fc.nat(), hostileValue, fc.string({ maxLength: 16 }))
    .map(([valid, mutation, pick, hostile, key]) => {
      const v = structuredClone(valid);
      if (mutation === 'root') return { value: hostile, mutation };
      if (mutation === 'retype') {
        const all = nodes(v);
        return { value: set(v, all[pick % all.length], hostile), mutation };
      }
      const objs = objects(v);
      if (objs.length === 0) return { value: hostile, mutation: 'root' as const };
      const target = get(v, objs[pick % objs.length]) as Record<string, unknown>;
      const keys = Object.keys(target);
      if (mutation === 'drop' && keys.length > 0) delete target[keys[pick % keys.length]];
      else Object.defineProperty(target, key === '' ? '__proto__' : key, { value: hostile, enumerable: true, writable: true, configurable: true });
      return { value: v, mutation };
    });
}
