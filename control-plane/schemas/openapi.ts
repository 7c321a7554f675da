/**
 * The OpenAPI 3.1 document, generated from the route table: the schemas that check bodies, query
 * strings and headers are the ones it declares; answers, error codes (the registry's table) and
 * response headers come from the routes and the error table. Every schema exported by a module
 * of request schemas is a named component, referenced wherever a route uses it.
 */
import type { TSchema } from '@sinclair/typebox';
import * as answerRequests from '../../answer/requests.js';
import * as datasetRequests from '../../catalog/datasets/requests.js';
import type { ErrorCode } from '../../errors/codes.js';
import * as ingestRequests from '../../ingest/requests.js';
import * as retrievalRequests from '../../retrieval/requests.js';
import type { Route } from '../http/router.js';
import { ERROR_ANSWERS, errorTable } from '../http/status.js';
import * as common from '../../contract/common.js';
import * as datasetSchemas from './datasets.js';
import * as jobSchemas from './jobs.js';
import * as uploadSchemas from './uploads.js';

const MSGPACK = 'application/msgpack';
const REF = '#/components/schemas/';

/** Schemas by identity: a route's schema (or a part of one) that is exported under a name is referenced by it. */
const NAMED: Map<object, string> = (() => {
  const names = new Map<object, string>();
  const taken = new Map<string, object>();
  for (const mod of [common, datasetSchemas, uploadSchemas, jobSchemas, datasetRequests, retrievalRequests, ingestRequests, answerRequests]) {
    for (const [name, value] of Object.entries(mod)) {
      if (!/^[A-Z]/.test(name) || typeof value !== 'object' || value === null || Array.isArray(value) || !('type' in value || 'anyOf' in value || 'oneOf' in value)) continue;
      if (names.has(value)) continue;
      // Two modules exporting one name for different schemas would make the document lie.
      if (taken.has(name) && taken.get(name) !== value) throw new Error(`two request schemas are named ${name}: rename one`);
      taken.set(name, value);
      names.set(value, name === 'ErrorBody' ? 'Error' : name);
    }
  }
  return names;
})();

/** Path parameters whose unknown value answers a resource's own not-found code. */
const NOT_FOUND: Record<string, ErrorCode> = {
  datasetId: 'dataset_not_found',
  jobId: 'job_not_found',
  sourceId: 'source_not_found',
  scheduleId: 'schedule_not_found',
  documentId: 'document_not_found',
  connectionId: 'connection_not_found',
  sessionId: 'session_not_found',
  runId: 'run_not_found',
};

export interface DocumentOptions {
  /** Where this service answers (the caller's Host, or SABLE_PUBLIC_URL). */
  serverUrl: string;
  /** Components beyond the routes' own schemas (source configs, checked in a second step). */
  schemas?: Record<string, unknown>;
}

export function openApiDocument(routes: readonly Route[], opts: DocumentOptions): Record<string, unknown> {
  const components = new Components();
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const r of routes) {
    if (r.auth === 'cluster') continue; // between a cluster's nodes, not for clients
    const path = r.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const operationId = r.operationId ?? operationIdOf(r.method, r.path);
    if (operationIds.has(operationId)) throw new Error(`two routes have the operationId ${operationId}: give one an operationId`);
    operationIds.add(operationId);
    const parameters = [
      ...[...r.path.matchAll(/:([A-Za-z]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
      ...parametersOf(r.query, 'query', components),
      ...parametersOf(r.headers, 'header', components),
      { $ref: '#/components/parameters/RequestId' },
    ];
    const op: Record<string, unknown> = {
      operationId,
      summary: r.summary,
      parameters,
      ...securityOf(r),
      // The role is not expressible in OpenAPI security: spelled out for clients and for the
      // isolation test, which checks every admin route against a member key.
      'x-sable-auth': r.auth,
      ...requestBodyOf(r, components),
      responses: { ...successes(r, components), ...failures(r) },
    };
    const notes = [r.description, r.auth === 'admin' ? 'Needs an admin key (403 insufficient_role otherwise).' : undefined];
    if (notes.some(Boolean)) op.description = notes.filter(Boolean).join(' ');
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sable',
      version: '0.1.0',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description:
        'Datasets, vectors and search, bulk loads, ingestion (sources, jobs, schedules, documents), questions answered with citations (runs, sessions). Canonical paths are unprefixed; /v1/datasets... routes too. ' +
        'Errors are {error, message} (plus the fields a code names; a 500 adds request_id); every answer carries X-Request-Id; ' +
        'a method a path does not take answers 405 method_not_allowed with Allow (the methods it takes). ' +
        'Lists page one way per kind: offset pages with totals (limit 1-200, offset) for the catalogs (datasets, sources, schedules, jobs, job files), ' +
        'a cursor for a dataset\'s documents (it grows while it is read), and the last `limit` items for sessions, messages and events. ' +
        'Codes and statuses: ' +
        errorTable().map((e) => `${e.code} ${e.status} (${e.meaning})`).join('; ') + '.',
    },
    servers: [{ url: opts.serverUrl, description: 'this service' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        sessionToken: { type: 'http', scheme: 'bearer', description: 'a dashboard session token from POST /auth/sessions' },
        streamToken: { type: 'apiKey', in: 'query', name: 'stream_token', description: "a run's stream token from POST /intelligence/runs/{runId}/stream-token (an EventSource cannot send headers)" },
      },
      parameters: {
        RequestId: { name: 'X-Request-Id', in: 'header', required: false, description: 'echoed in the answer (letters, digits, . _ : @ -, up to 128); a new one is made otherwise', schema: { type: 'string', pattern: '^[A-Za-z0-9._:@-]{1,128}$' } },
      },
      headers: {
        RequestId: { description: "the request's id: the caller's X-Request-Id, or a new UUID", schema: { type: 'string' } },
        RetryAfter: { description: 'seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
      },
      schemas: { Error: components.ref(common.ErrorBody, true), ...components.schemas(), ...opts.schemas },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}

/** `getDatasetDocumentDownload` from GET /datasets/:datasetId/documents/:documentId/download: a collection named before a parameter is singular. */
function operationIdOf(method: string, path: string): string {
  const segments = path.split('/').filter(Boolean);
  const words = segments.flatMap((s, i) => {
    if (s.startsWith(':') || s === 'v1') return [];
    const singular = segments[i + 1]?.startsWith(':') && s.endsWith('s') ? s.slice(0, -1) : s;
    return singular.split(/[-_.]/).filter(Boolean);
  });
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') + (segments[0] === 'v1' ? 'V1' : '');
}

/** The named schemas a document references, each once, themselves referencing the named schemas inside them. */
class Components {
  private readonly used = new Map<string, unknown>();

  /** `schema` with every named part (itself included unless `inline`) as a $ref. */
  ref(schema: unknown, inline = false): unknown {
    if (typeof schema !== 'object' || schema === null) return schema;
    const name = NAMED.get(schema);
    if (name !== undefined && !inline) {
      if (!this.used.has(name)) {
        this.used.set(name, null);
        this.used.set(name, this.ref(schema, true));
      }
      return { $ref: REF + name };
    }
    if (Array.isArray(schema)) return schema.map((s) => this.ref(s));
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, this.ref(v)]));
  }

  schemas(): Record<string, unknown> {
    return Object.fromEntries([...this.used].sort(([a], [b]) => a.localeCompare(b)));
  }
}

function parametersOf(schema: TSchema | undefined, where: 'query' | 'header', components: Components): object[] {
  const properties = (schema?.properties ?? {}) as Record<string, { description?: string; default?: unknown }>;
  const required = new Set((schema?.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => ({
    name,
    in: where,
    // A parameter with a default is filled in when absent: the caller may leave it out.
    required: required.has(name) && s.default === undefined,
    ...(s.description ? { description: s.description } : {}),
    schema: components.ref(s),
  }));
}

function securityOf(r: Route): Record<string, unknown> {
  if (r.auth === 'none') return { security: [] };
  if (r.auth === 'session') return { security: [{ sessionToken: [] }] };
  if (r.tokenAuth) return { security: [{ apiKey: [] }, { streamToken: [] }] };
  return {};
}

function requestBodyOf(r: Route, components: Components): Record<string, unknown> {
  if (r.streamContent) return { requestBody: { required: true, content: Object.fromEntries(Object.entries(r.streamContent).map(([t, schema]) => [t, { schema }])) } };
  if (!r.body) return {};
  // Inline at the top (named parts referenced): generators read a `default` there as "may be left
  // out", and as "always present" in a referenced component (openapi-typescript made top_k,
  // stream and mode required in a query).
  const schema = components.ref(r.body, true);
  const content: Record<string, unknown> = { 'application/json': { schema } };
  if (r.msgpack) content[MSGPACK] = { schema };
  for (const type of r.accepts ?? []) content[type] = { schema: { type: 'string', contentMediaType: type } };
  return { requestBody: { required: true, content } };
}

const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };

function successes(r: Route, components: Components): Record<string, unknown> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [status, schema] of Object.entries(r.responses ?? { 200: null })) {
    if (schema === null) {
      out[status] = { description: r.responses ? 'No content' : 'Success', headers: REQUEST_ID_HEADER };
      continue;
    }
    const ref = components.ref(schema);
    out[status] = { description: 'Success', headers: REQUEST_ID_HEADER, content: { 'application/json': { schema: ref }, ...(r.msgpack ? { [MSGPACK]: { schema: ref } } : {}) } };
  }
  for (const [type, schema] of Object.entries(r.answerStreams ?? {})) {
    const ok = (out['200'] ??= { description: 'Success', headers: REQUEST_ID_HEADER, content: {} });
    const event = { description: 'the data: line of one event; the stream is a sequence of `id: <seq>` and `data: <this, as JSON>` pairs', ...(components.ref(schema) as object) };
    ((ok.content ??= {}) as Record<string, unknown>)[type] = { schema: event };
  }
  return out;
}

/** The error codes a route can answer: from its auth, path, body, query and headers, and its own list. */
function errorCodesOf(r: Route): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  if (r.body || r.query || r.headers || r.stream) codes.add('invalid_request');
  if (r.auth !== 'none') codes.add('unauthorized');
  if (r.auth === 'admin') codes.add('insufficient_role');
  for (const m of r.path.matchAll(/:([A-Za-z]+)/g)) {
    codes.add(NOT_FOUND[m[1]!] ?? 'not_found');
    // Before routing is ready (provisioning; in a cluster, too few replicas in sync): retryable.
    if (m[1] === 'datasetId') codes.add('dataset_not_ready').add('vecstack_router_failed');
  }
  if (r.body || r.stream) {
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
  }
  for (const c of r.errors ?? []) codes.add(c);
  return [...codes];
}

function failures(r: Route): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(r)) {
    const status = ERROR_ANSWERS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), ERROR_ANSWERS[code].shown ?? code]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const unique = [...new Set(codes)];
    out[String(status)] = {
      description: unique.join(', '),
      headers: { ...REQUEST_ID_HEADER, ...(status === 429 || status === 503 ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}) },
      content: {
        'application/json': { schema: { allOf: [{ $ref: `${REF}Error` }, { properties: { error: { enum: unique } } }] } },
        ...(r.msgpack ? { [MSGPACK]: { schema: { $ref: `${REF}Error` } } } : {}),
      },
    };
  }
  return out;
}
