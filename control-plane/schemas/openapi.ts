/** The OpenAPI document, generated from the route table: request schemas, answers, error table. */
import type { Route } from '../http/router.js';
import { errorTable } from '../http/status.js';
import { ErrorBody } from './common.js';

/** `schemas` joins the components (schemas that bodies check in a second step, like source configs). */
export function openApiDocument(routes: readonly Route[], schemas: Record<string, unknown> = {}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const params = [...r.path.matchAll(/:([A-Za-z]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const responses: Record<string, unknown> = {
      default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    };
    if (r.responses) {
      for (const [status, schema] of Object.entries(r.responses)) {
        responses[status] = schema === null ? { description: 'No content' } : { description: 'Success', content: { 'application/json': { schema } } };
      }
    } else {
      responses['2XX'] = { description: 'Success' };
    }
    if (r.answerStreams) {
      const ok = (responses['200'] ??= { description: 'Success', content: {} }) as { content: Record<string, unknown> };
      for (const [type, schema] of Object.entries(r.answerStreams)) ok.content[type] = { schema, description: 'one event (a `data:` line); the stream is a sequence of them' };
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      ...(params.length ? { parameters: params } : {}),
      ...(r.auth === 'none' ? { security: [] } : r.auth === 'session' ? { security: [{ sessionToken: [] }] } : {}),
      // The role is not expressible in OpenAPI security: spelled out for clients and for the
      // isolation test, which checks every admin route against a member key.
      'x-sable-auth': r.auth,
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } } : {}),
      ...(r.streamContent ? { requestBody: { required: true, content: Object.fromEntries(Object.entries(r.streamContent).map(([t, schema]) => [t, { schema }])) } } : {}),
      responses,
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
      description:
        'Datasets, vectors and search, bulk loads, ingestion (sources, jobs, schedules, documents), questions answered with citations (runs, sessions). Canonical paths are unprefixed; /v1/datasets... routes too. ' +
        'Errors are {error, message} (plus the fields a code names); codes and statuses: ' +
        errorTable().map((e) => `${e.code} ${e.status} (${e.meaning})`).join('; ') + '.',
    },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' }, sessionToken: { type: 'http', scheme: 'bearer', description: 'a dashboard session token from POST /auth/sessions' } },
      schemas: { Error: ErrorBody, ...schemas },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}
