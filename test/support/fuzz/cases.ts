// Generated requests for every route of the OpenAPI document: who calls (two organizations'
// keys, a member key, no key, a forged key, session tokens), which resources the path names
// (seeded ones of either organization, ones the run created, hostile strings), a query, and a
// body from the route's schema (valid, or mutated) in JSON, msgpack or a content type the route
// does not take. Organization A holds the seeded data: its keys only read, or send bodies the
// route's own validator refuses, so whatever A's data looks like after the run is what a bug did.
import fc from 'fast-check';
import { pack } from 'msgpackr';
import { compileBody } from '../../../dist/contract/validation.js';
import type { Case } from './runner.js';
import { hostileValue, localUrl, mutatedOf, validOf, type Hints, type Schema } from './schema-arbitrary.js';

export type Org = 'A' | 'B';
export type Auth = 'none' | 'key' | 'admin' | 'session';

export interface RouteInfo {
  key: string;
  method: string;
  path: string;
  params: string[];
  auth: Auth;
  body?: Schema;
  msgpack: boolean;
  /** Takes its body as a stream (uploads). */
  stream: boolean;
  check?: (body: unknown) => string | null;
}

/** Routes that change nothing, whoever calls them with whatever body. */
const READ_ONLY = new Set([
  'POST /datasets/{datasetId}/search',
  'POST /datasets/{datasetId}/embed',
  'POST /ingestion/sources/validate',
  'POST /auth/sessions',
  'POST /sources/batch-info',
]);

export function readOnly(r: RouteInfo): boolean {
  return r.method === 'GET' || READ_ONLY.has(r.key);
}

export function routesOf(doc: any): RouteInfo[] {
  const out: RouteInfo[] = [];
  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [m, op] of Object.entries<any>(ops)) {
      const method = m.toUpperCase();
      const content = op.requestBody?.content ?? {};
      const body = content['application/json']?.schema;
      const auth: Auth = Array.isArray(op.security) && op.security.length === 0 ? 'none' : op.security?.[0]?.sessionToken ? 'session' : /Needs an admin key/.test(op.description ?? '') ? 'admin' : 'key';
      out.push({
        key: `${method} ${path}`,
        method,
        path,
        params: [...path.matchAll(/\{(\w+)\}/g)].map((x) => x[1]),
        auth,
        body,
        msgpack: /msgpack/.test(op.summary ?? ''),
        stream: !body && Object.keys(content).length > 0,
        check: body ? compileBody(body) : undefined,
      });
    }
  }
  return out;
}

/** What each organization holds, by path parameter; filled by seeding and by the run itself. */
export interface Pools {
  /** endableA/B: session tokens of their own for DELETE /auth/sessions, which ends the token it is sent with. */
  keys: { A: string; B: string; member: string; sessionA: string; sessionB: string; endableA: string; endableB: string };
  ids: Record<Org, Record<string, string[]>>;
}

/** Path parameters that name a resource of one organization (another's must not be reachable). */
const OWNED = new Set(['datasetId', 'documentId', 'jobId', 'sourceId', 'scheduleId', 'connectionId', 'runId', 'sessionId', 'ref']);

const segment = fc.oneof(
  fc.constantFrom(
    '..', '%2e%2e', '..%2F..%2Fadmin.key', '%2F', '%00', '%ZZ', '%', '%E0%A4%A', '%C0%AF', '%FF%FE', 'a'.repeat(5000), 'a'.repeat(1536), 'a'.repeat(1537), '%C3%A9'.repeat(1000),
    '%20', '-1', '0', '9007199254740993', '18446744073709551616', '1e400', 'NaN', '-0', '0x10', 'null', 'undefined',
    '__proto__', 'constructor', '%5C..%5Cadmin.key', 'doc-1', '%27', '%22', '%0D%0ASet-Cookie:%20x=1', 'emb%3Aopenai%3Aapi_key',
  ),
  fc.uuid(),
  fc.nat().map(String),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map(encodeURIComponent),
);

type ParamChoice = { org: Org; i: number } | { raw: string };

const paramChoice: fc.Arbitrary<ParamChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ org: fc.constantFrom<Org>('A', 'B', 'B'), i: fc.nat() }) },
  { weight: 2, arbitrary: segment.map((raw) => ({ raw })) },
);

const QUERY_KEYS = ['limit', 'offset', 'cursor', 'status', 'dataset_id', 'force', 'provider', 'after', 'source_path', 'code', 'state', 'error'];
const queryValue = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom(
    '0', '-1', '201', '1e400', 'NaN', '1.5', '9007199254740993', '', 'true', 'false', 'pending', 'completed', 'failed',
    'ready', 'processing', 'google', 'atlassian', 's3://bucket/key.pdf', 'gs://bucket/object', 'gdrive://file-1',
    'ftp://127.0.0.1/x', 'not an address', 'https://127.0.0.1:9/', '\u0000', '../../admin.key',
  ),
  localUrl,
  fc.string({ maxLength: 20 }),
);

const forgedKeys = fc.constantFrom('sable_' + '0'.repeat(64), '', ' ', 'sable_', 'x'.repeat(8000), 'null', 'sable_' + 'f'.repeat(63) + 'g', '\u00ff\u00fe');

type Caller = 'A' | 'B' | 'member' | 'none' | 'forged' | 'bearerA' | 'bearerB' | 'bearerForged';
const callers = fc.constantFrom<Caller>('A', 'A', 'B', 'B', 'B', 'B', 'member', 'none', 'forged', 'bearerA', 'bearerB', 'bearerForged');

type BodyPlan =
  | { kind: 'valid'; value: unknown }
  | { kind: 'mutated'; value: unknown; mutation: string }
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'bytes'; bytes: Uint8Array };

const contentTypes = fc.constantFrom(
  'application/json', 'application/json', 'application/json', 'application/json', 'application/json', 'application/msgpack',
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/json; charset=utf-16',
  'APPLICATION/JSON', 'application/xml', 'none',
);

/** Strings for properties whose meaning the service checks beyond the schema. */
export function hintsOf(pools: Pools): Hints {
  const ids = (name: string) => fc.oneof(
    fc.constantFrom(...[...pools.ids.A[name] ?? [], ...pools.ids.B[name] ?? [], 'missing']),
    fc.uuid(),
  );
  // The seeded datasets have 8 and 384 (the local model's) dimensions: vectors of those reach
  // the engine, others stop at the dimension check.
  const vector = fc.oneof(
    fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 8, maxLength: 8 }),
    fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 384, maxLength: 384 }),
    fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 10 }),
  );
  return (prop, schema) => {
    if ((prop === 'query' || prop === 'values') && Array.isArray(schema.anyOf)) return vector;
    if (schema.type !== 'string') return undefined;
    switch (prop) {
      case 'dataset_id':
        return ids('datasetId');
      case 'source_id':
        return ids('sourceId');
      case 'job_id':
        return ids('jobId');
      case 'session_id':
        return ids('sessionId');
      case 'connection_id':
        return fc.oneof(ids('connectionId'), fc.uuid());
      case 'cron':
        return fc.constantFrom('*/5 * * * *', '0 0 1 1 *', '@yearly', '61 * * * *', '* * * * * * *', '0 0 31 2 *', 'every day', '0 0 * * MON-FRI');
      case 'timezone':
        return fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York', 'Mars/Olympus', '+05:00', 'Etc/GMT-14');
      case 'content_type':
        return fc.constantFrom('application/vnd.apache.parquet', 'text/plain', 'application/pdf', '', '*/*', 'text/plain; x=\r\nX-Injected: 1', 'a'.repeat(255));
      case 'provider':
        return fc.constantFrom('local', 'openai', 'cohere', 'openai-compatible', 'managed', 'google', 'atlassian', 'nope', '');
      case 'model':
        return fc.constantFrom('all-minilm-l6-v2', 'text-embedding-3-small', 'embed-english-v3.0', 'mystery', '');
      case 'type':
        return fc.constantFrom('i64', 'i32', 'u32', 'f32', 'f64', 'string', 'bool', 'long', 'keyword', 'float', 'vector', '');
      case 'name':
        return fc.oneof(fc.string({ minLength: 1, maxLength: 24 }), fc.constantFrom('fuzz-vectors', 'year', '../../etc/passwd', 'text'));
      case 'field':
        return fc.constantFrom('year', 'lang', 'text', 'id', '__proto__', 'missing', '');
      default:
        return undefined;
    }
  };
}

interface Plan {
  caller: Caller;
  params: ParamChoice[];
  query: Record<string, string> | null;
  contentType: string;
  accept: string | null;
  body: BodyPlan;
}

export function planOf(r: RouteInfo, hints: Hints): fc.Arbitrary<Plan> {
  const bodies: fc.Arbitrary<BodyPlan>[] = r.body
    ? [
        validOf(r.body, hints).map((value) => ({ kind: 'valid' as const, value })),
        validOf(r.body, hints).map((value) => ({ kind: 'valid' as const, value })),
        validOf(r.body, hints).map((value) => ({ kind: 'valid' as const, value })),
        mutatedOf(r.body, hints).map(({ value, mutation }) => ({ kind: 'mutated' as const, value, mutation })),
        mutatedOf(r.body, hints).map(({ value, mutation }) => ({ kind: 'mutated' as const, value, mutation })),
      ]
    : [fc.constant({ kind: 'none' as const }), fc.constant({ kind: 'none' as const }), hostileValue.map((value) => ({ kind: 'json' as const, value })), fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ kind: 'bytes' as const, bytes }))];
  return fc.record({
    caller: callers,
    params: fc.tuple(...r.params.map(() => paramChoice)),
    query: fc.option(fc.dictionary(fc.constantFrom(...QUERY_KEYS), queryValue, { maxKeys: 3 }), { freq: 2 }),
    contentType: contentTypes,
    accept: fc.option(fc.constantFrom('application/msgpack', 'text/event-stream', '*/*', 'application/json')),
    body: fc.oneof(...bodies),
  }) as fc.Arbitrary<Plan>;
}

/** A plan as a request, with the ids the pools hold now. */
export function caseOf(r: RouteInfo, plan: Plan, pools: Pools, forged: string): Case {
  let caller = plan.caller;
  const headers: Record<string, string> = {};
  let body: string | Buffer | undefined;
  let label: string = plan.body.kind === 'mutated' ? `mutated body (${plan.body.mutation})` : `${plan.body.kind} body`;
  const ctype = plan.contentType;
  if (r.method !== 'GET' && plan.body.kind !== 'none') {
    const value = plan.body.kind === 'bytes' ? plan.body.bytes : plan.body.value;
    if (plan.body.kind === 'bytes') body = Buffer.from(plan.body.bytes);
    else if (ctype === 'application/msgpack') body = pack(value);
    else body = JSON.stringify(value) ?? 'null';
    if (ctype !== 'none') headers['content-type'] = ctype;
    label += `, ${ctype}`;
  }
  // A's keys may not change A's data: on a route that writes, only a body that the route's own
  // validator refuses (checked here with the same compiled schema) keeps A's key.
  if ((caller === 'A' || caller === 'member') && !readOnly(r) && !(caller === 'member' && r.auth === 'admin')) {
    const refused = r.check !== undefined && typeof body === 'string' && /^application\/json$/i.test(headers['content-type'] ?? 'application/json') && r.check(parsed(body)) !== null;
    if (!refused) caller = 'B';
  }
  const org: Org | null = caller === 'A' || caller === 'member' || caller === 'bearerA' ? 'A' : caller === 'B' || caller === 'bearerB' ? 'B' : null;
  switch (caller) {
    case 'A':
      headers['x-api-key'] = pools.keys.A;
      break;
    case 'B':
      headers['x-api-key'] = pools.keys.B;
      break;
    case 'member':
      headers['x-api-key'] = pools.keys.member;
      break;
    case 'forged':
      headers['x-api-key'] = forged;
      break;
    case 'bearerA':
      headers.authorization = `Bearer ${r.key === 'DELETE /auth/sessions' ? pools.keys.endableA : pools.keys.sessionA}`;
      break;
    case 'bearerB':
      headers.authorization = `Bearer ${r.key === 'DELETE /auth/sessions' ? pools.keys.endableB : pools.keys.sessionB}`;
      break;
    case 'bearerForged':
      headers.authorization = `Bearer ${forged}`;
      break;
  }
  if (plan.accept) headers.accept = plan.accept;
  let foreign = false;
  let path = r.path;
  r.params.forEach((name, i) => {
    const choice = plan.params[i];
    let value: string;
    if ('raw' in choice) value = choice.raw;
    else {
      const list = pools.ids[choice.org][name] ?? [];
      value = list.length ? encodeURIComponent(list[choice.i % list.length]) : 'missing';
      if (list.length && org && OWNED.has(name) && choice.org !== org) foreign = true;
    }
    path = path.replace(`{${name}}`, value);
  });
  if (plan.query) path += `?${new URLSearchParams(plan.query)}`;
  const expect = expectedStatuses(r, caller);
  label += `, caller ${caller}`;
  return { route: r.key, method: r.method, path, headers, body, expect, foreign, label };
}

function parsed(body: string): unknown {
  if (body === '') return {};
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** 401 for a missing, forged or wrong kind of credential; 403 for a member on an admin route. */
function expectedStatuses(r: RouteInfo, caller: Caller): number[] | undefined {
  // Routing and the adapter answer before authentication: 404 and 405 for a path that matches no
  // route of that method (a parameter that does not decode), 413 for a body over the limit.
  const refused = (status: number) => [status, 404, 405, 413];
  if (r.auth === 'key' || r.auth === 'admin') {
    if (caller === 'none' || caller === 'forged' || caller.startsWith('bearer')) return refused(401);
    if (r.auth === 'admin' && caller === 'member') return refused(403);
  }
  if (r.auth === 'session' && !(caller === 'bearerA' || caller === 'bearerB')) return refused(401);
  return undefined;
}
