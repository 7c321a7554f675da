/**
 * Routes: a table of method + path pattern, auth requirement, body schema (ajv) and handler.
 * Canonical paths are unprefixed; `/v1/datasets...` still routes; `/api/v1/...` is 404.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { badRequest, SableError, type ErrorCode } from '../../errors/codes.js';
import { parseJsonWithVector } from './json-vector.js';
import { acceptsMsgpack, decodeMsgpack, encodeMsgpack, isMsgpackType, MSGPACK } from './msgpack.js';
import { errorResponse } from './status.js';
import { json, type Request, type Response } from './types.js';
import { compileBody, compileText, type BodyCheck, type TextCheck } from '../../contract/validation.js';
import { CLUSTER_SECRET_HEADER } from '../../cluster/replica-wire.js';

/** key and admin: an API key (X-API-Key); session: a dashboard session token (Authorization: Bearer). */
/** `cluster`: the internal routes between a cluster's nodes, which present the cluster's secret (never in the OpenAPI document). */
export type Auth = 'none' | 'key' | 'admin' | 'session' | 'cluster';

export interface Caller {
  orgId: string;
  role: 'admin' | 'member';
  keyId: string;
}

export interface Context<B = unknown, Q = any> {
  req: Request;
  params: Record<string, string>;
  caller: Caller;
  /** The body, valid against the route's schema. */
  body: B;
  /** The query parameters the route declares, typed and defaulted by its schema. */
  query: Q;
  /** The caller sent or accepts msgpack on a route that speaks it. */
  msgpack: boolean;
}

/** A response in the encoding the caller chose (msgpack on routes that speak it, else JSON). */
export function reply(ctx: Context, status: number, value: unknown): Response {
  if (ctx.msgpack) return { status, headers: { 'content-type': MSGPACK }, body: encodeMsgpack(value) };
  return json(status, value);
}

export interface Route<B = unknown, Q = any> {
  method: string;
  path: string;
  auth: Auth;
  summary: string;
  /** The OpenAPI operationId, when the one made from the method and path reads badly. */
  operationId?: string;
  /** Decisions the contract leaves open (response shapes and semantics), for the OpenAPI document. */
  description?: string;
  /** The body's schema: its validator, the handler's body type and its OpenAPI entry. */
  body?: TSchema;
  /** The query parameters: checked (text coerced to their types, defaults filled) and declared in the OpenAPI document. */
  query?: TObject;
  /** Request headers the route reads besides the API key (Last-Event-ID): checked and declared the same way. */
  headers?: TObject;
  /** Answers by status, for the OpenAPI document (null: no body). */
  responses?: Record<number, TSchema | null>;
  /** Error codes the route raises besides those its auth, path, body and query imply, for the OpenAPI document. */
  errors?: ErrorCode[];
  /** Request content types besides JSON that the handler reads from req.body itself. */
  accepts?: string[];
  /** Takes and answers application/msgpack too. */
  msgpack?: boolean;
  /** A top-level field of a JSON body read straight into a Float32Array (a search's query). */
  vectorField?: string;
  /** Reads its body from `req.stream` (uploads): the adapter does not buffer it. */
  stream?: boolean;
  /** For the OpenAPI document: the content types and shapes a streamed body takes. */
  streamContent?: Record<string, object>;
  /** Key routes that also take a token of their own in the query when no API key is sent (stream tokens). */
  tokenAuth?: (req: Request, params: Record<string, string>) => Caller | undefined;
  /** For the OpenAPI document: content types the 200 answer also comes in (an SSE stream), with the shape of one event. */
  answerStreams?: Record<string, object>;
  handler(ctx: Context<B, Q>): Promise<Response>;
}

/** A route whose handler's body and query are typed from their schemas. */
export function route<S extends TSchema = TSchema, Q extends TObject = TObject>(r: Omit<Route<Static<S>, Static<Q>>, 'body' | 'query'> & { body?: S; query?: Q }): Route {
  return r as Route;
}

interface Compiled extends Route {
  segments: string[];
  /** Indexes of the pattern's `:param` segments, and their names. */
  paramAt: number[];
  paramNames: string[];
  check?: BodyCheck;
  queryCheck?: TextCheck;
  headerCheck?: TextCheck;
}

export type Authenticate = (req: Request) => Caller | undefined;

type Match = { route: Compiled; params: Record<string, string> } | { methods: string[] } | undefined;

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Path parameters name records kept in LMDB, whose keys hold at most 1978 bytes: a longer one
 * threw from the lookup (a 500). Signed tokens (an upload URL's, a preview_ref) are no keys: they
 * carry their own data, as long as it is, and their signature decides.
 */
const MAX_PARAM_BYTES = 1536;
const SIGNED_PARAMS = new Set(['token', 'ref']);

/** Paths remembered with their match: clients call the same few paths over and over. */
const MATCH_CACHE_SIZE = 512;

export class Router {
  private readonly routes: Compiled[] = [];
  /** Routes by segment count, for matching. */
  private readonly bySegments = new Map<number, Compiled[]>();
  private readonly matched = new Map<string, Match>();
  /**
   * Awaited once a route matched, before its caller is authenticated (cluster mode: the read
   * barrier that brings the node's catalog copy to the cluster's head). A rejection is the answer.
   */
  beforeRoute: ((route: Route) => Promise<void>) | null = null;

  constructor(
    private readonly authenticate: Authenticate,
    private readonly authenticateSession: Authenticate = () => undefined,
    /** Cluster mode: what the internal routes' callers present. */
    private readonly clusterSecret?: string,
  ) {}

  add(...routes: Route[]): void {
    for (const r of routes) {
      const segments = split(r.path);
      const paramAt = segments.flatMap((s, i) => (s.startsWith(':') ? [i] : []));
      const compiled: Compiled = {
        ...r,
        segments,
        paramAt,
        paramNames: paramAt.map((i) => segments[i]!.slice(1)),
        check: r.body ? compileBody(r.body, { closed: true }) : undefined,
        queryCheck: r.query ? compileText(r.query, 'query') : undefined,
        headerCheck: r.headers ? compileText(r.headers, 'header') : undefined,
      };
      this.routes.push(compiled);
      const same = this.bySegments.get(segments.length) ?? this.bySegments.set(segments.length, []).get(segments.length)!;
      same.push(compiled);
    }
    this.matched.clear();
  }

  all(): readonly Route[] {
    return this.routes;
  }

  /** Whether the route of this request reads its body as a stream. */
  streams(method: string, path: string): boolean {
    const m = this.match(method, path);
    return m !== undefined && 'route' in m && m.route.stream === true;
  }

  /** The methods a path takes, or undefined when no route has it. */
  methodsOf(path: string): string[] | undefined {
    const m = this.find('', path);
    return m && 'methods' in m ? m.methods : undefined;
  }

  /** The route of a request and its path parameters, or the methods the path allows, or undefined. */
  match(method: string, path: string): Match {
    const key = method + ' ' + path;
    const known = this.matched.get(key);
    if (known !== undefined || this.matched.has(key)) return known;
    const m = this.find(method, path);
    if (this.matched.size >= MATCH_CACHE_SIZE) this.matched.clear();
    this.matched.set(key, m);
    return m;
  }

  private find(method: string, path: string): Match {
    const segs = split(canonical(path));
    const methods: string[] = [];
    for (const route of this.bySegments.get(segs.length) ?? []) {
      if (!literalsMatch(route, segs)) continue;
      if (route.method !== method) {
        methods.push(route.method);
        continue;
      }
      const params = paramsOf(route, segs);
      if (params) return { route, params };
    }
    return methods.length > 0 ? { methods } : undefined;
  }

  /** Every answer, errors included, carries the request's id (the caller's X-Request-Id, or a new one). */
  async handle(req: Request): Promise<{ response: Response; pattern: string; requestId: string }> {
    const requestId = requestIdOf(req);
    let pattern = 'unmatched';
    let response: Response;
    try {
      if (req.path.startsWith('/api/')) throw new SableError('not_found', `no route for ${req.method} ${req.path}`);
      const m = this.match(req.method, req.path);
      if (!m) throw new SableError('not_found', `no route for ${req.method} ${req.path}`);
      if ('methods' in m) {
        throw new SableError('method_not_allowed', `${req.method} is not allowed here (allowed: ${m.methods.join(', ')})`, { allow: m.methods });
      }
      const { route, params } = m;
      pattern = route.path;
      if (this.beforeRoute) await this.beforeRoute(route);
      let caller: Caller = { orgId: '', role: 'member', keyId: '' };
      if (route.auth === 'session') {
        if (req.headers['x-api-key']) throw new SableError('unauthorized', 'dashboard routes take a session token (Authorization: Bearer, from POST /auth/sessions), not an API key');
        const found = this.authenticateSession(req);
        if (!found) throw new SableError('unauthorized', 'missing, expired or invalid session token (send Authorization: Bearer <token> from POST /auth/sessions)');
        caller = found;
      } else if (route.auth === 'cluster') {
        const presented = req.headers[CLUSTER_SECRET_HEADER];
        if (!this.clusterSecret || !presented || !sameSecret(presented, this.clusterSecret)) throw new SableError('unauthorized', 'internal routes take the cluster secret');
      } else if (route.auth !== 'none') {
        const found = this.authenticate(req) ?? (req.headers['x-api-key'] === undefined ? route.tokenAuth?.(req, params) : undefined);
        if (!found) throw new SableError('unauthorized', 'missing or invalid API key (send it in the X-API-Key header)');
        if (route.auth === 'admin' && found.role !== 'admin') throw new SableError('insufficient_role', 'this operation needs an admin key');
        caller = found;
      }
      for (const name of route.paramNames) {
        if (!SIGNED_PARAMS.has(name) && Buffer.byteLength(params[name]!) > MAX_PARAM_BYTES) throw new SableError('not_found', `${name} is longer than ${MAX_PARAM_BYTES} bytes: there is no such resource`);
      }
      const type = contentTypeOf(req);
      const body = !route.stream && (route.body || route.accepts) ? parseBody(req, route, type) : undefined;
      const msgpack = route.msgpack === true && (type === MSGPACK || acceptsMsgpack(req.headers.accept));
      const problem = route.check && !Buffer.isBuffer(body) ? route.check(body) : null;
      if (problem !== null) throw badRequest(problem);
      let query: Record<string, unknown> = NO_QUERY;
      if (route.queryCheck) {
        const checked = route.queryCheck((name) => req.query.get(name));
        if (checked.problem !== null) throw badRequest(checked.problem);
        query = checked.value;
      }
      const headerProblem = route.headerCheck?.((name) => req.headers[name.toLowerCase()]).problem ?? null;
      if (headerProblem !== null) throw badRequest(headerProblem);
      response = await route.handler({ req, params, caller, body, msgpack, query });
    } catch (e) {
      response = errorResponse(e, requestId);
      if (response.status === 500) console.error(`sable: ${req.method} ${req.path} failed: request ${requestId}:`, e);
      // A client that sent msgpack reads its errors in msgpack too, unless it asks for JSON.
      if (contentTypeOf(req) === MSGPACK && !(req.headers.accept ?? '').includes('application/json')) response = asMsgpack(response);
    }
    if (wantsMsgpackOnly(req)) response = asMsgpack(response);
    response.headers = { ...response.headers, 'x-request-id': requestId };
    return { response, pattern, requestId };
  }
}

const NO_QUERY: Record<string, unknown> = Object.freeze({});

/** The caller's Accept names msgpack and not JSON: every JSON answer of any route goes as msgpack. */
function wantsMsgpackOnly(req: Request): boolean {
  const accept = req.headers.accept;
  return acceptsMsgpack(accept) && !accept!.includes('application/json');
}

/** A JSON answer re-encoded as msgpack (streams, pages and bytes are left as they are). */
function asMsgpack(res: Response): Response {
  if (typeof res.body !== 'string' || !(res.headers?.['content-type'] ?? '').startsWith('application/json')) return res;
  return { ...res, headers: { ...res.headers, 'content-type': MSGPACK }, body: encodeMsgpack(JSON.parse(res.body)) };
}

/** A caller's X-Request-Id when it is a plain token (it goes into logs and headers), else a new one. */
const REQUEST_ID = /^[A-Za-z0-9._:@\-]{1,128}$/;

function requestIdOf(req: Request): string {
  const sent = req.headers['x-request-id'];
  return sent !== undefined && REQUEST_ID.test(sent) ? sent : randomUUID();
}

function contentTypeOf(req: Request): string {
  const raw = req.headers['content-type'];
  if (raw === undefined || raw === 'application/json') return 'application/json';
  if (raw === MSGPACK) return MSGPACK;
  const type = raw.split(';')[0]!.trim().toLowerCase();
  return isMsgpackType(type) ? MSGPACK : type;
}

function parseBody(req: Request, route: Route, type: string): unknown {
  if (route.accepts?.includes(type)) return req.body;
  if (type === MSGPACK && route.msgpack) return shallow(decodeMsgpack(req.body));
  if (type !== 'application/json') {
    const accepted = ['application/json', ...(route.msgpack ? [MSGPACK] : []), ...(route.accepts ?? [])].join(' or ');
    throw new SableError('unsupported_media_type', `content type '${type}' is not accepted here (send ${accepted})`);
  }
  if (req.body.length === 0) return {};
  let value: unknown;
  try {
    value = route.vectorField ? parseJsonWithVector(req.body, route.vectorField) : JSON.parse(req.body.toString('utf8'));
  } catch {
    throw badRequest('the body is not valid JSON');
  }
  return shallow(value);
}

/**
 * Bodies nested deeper than this are refused: what a route keeps (metadata, configs, resume
 * state) is encoded and answered by code that recurses, and some thousands of levels overflow
 * its stack. No body of the API needs more than a handful.
 */
const MAX_BODY_DEPTH = 64;

/** `value` when it is nested at most MAX_BODY_DEPTH levels deep (typed arrays are leaves). */
function shallow(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop() as Record<string, unknown> | unknown[];
    const depth = depths.pop()!;
    if (depth > MAX_BODY_DEPTH) throw badRequest(`the body is nested more than ${MAX_BODY_DEPTH} levels deep`);
    if (ArrayBuffer.isView(v)) continue;
    const items = Array.isArray(v) ? v : Object.values(v);
    for (let i = 0; i < items.length; i++) {
      const x = items[i];
      if (typeof x === 'object' && x !== null) {
        stack.push(x);
        depths.push(depth + 1);
      }
    }
  }
  return value;
}

/** `/v1/datasets/...` is the legacy form of `/datasets/...`. */
function canonical(path: string): string {
  return path.startsWith('/v1/datasets') ? path.slice(3) : path;
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function literalsMatch(route: Compiled, segs: string[]): boolean {
  const pattern = route.segments;
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i]!.charCodeAt(0) !== 58 /* : */ && pattern[i] !== segs[i]) return false;
  }
  return true;
}

/** The decoded path parameters (frozen: a remembered match serves many requests), or undefined. */
function paramsOf(route: Compiled, segs: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let j = 0; j < route.paramAt.length; j++) {
    const raw = segs[route.paramAt[j]!]!;
    try {
      params[route.paramNames[j]!] = raw.includes('%') ? decodeURIComponent(raw) : raw;
    } catch {
      return undefined;
    }
  }
  return Object.freeze(params);
}
