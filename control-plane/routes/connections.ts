/**
 * Connections (stored OAuth grants): create (the consent URL), list, get, delete (revoked at the
 * provider), and the callback the provider sends the browser back to (no API key: the state
 * identifies the connection), which answers a small page for the person who consented.
 */
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../contract/json-schema.js';
import { PROVIDERS, serves } from '../../ingest/connections/providers.js';
import type { ConnectionService } from '../../ingest/connections/service.js';
import { CONNECTION_STATUSES } from '../../ingest/connections/store.js';
import { badRequest } from '../../errors/codes.js';
import { route, type Route } from '../http/router.js';
import { json } from '../http/types.js';

const Connection = Type.Object({
  id: Type.String(),
  provider: StringEnum(PROVIDERS),
  source_type: Type.Union([Type.String(), Type.Null()]),
  status: StringEnum(CONNECTION_STATUSES),
  account_email: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why the connection is in error (a refresh the provider refused, a denied consent)' }),
  scopes: Type.Array(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const ConnectionCreated = Type.Intersect([Connection, Type.Object({ authorization_url: Type.String() })]);
const ConnectionCreate = Type.Object({
  provider: Type.String({ description: 'google or atlassian (anything else: 400)' }),
  source_type: Type.Optional(StringEnum(['gdrive', 'gcs', 'jira', 'confluence'] as const, { description: 'selects the OAuth scopes (default: those of every type of the provider)' })),
});

export function connectionRoutes(connections: ConnectionService): Route[] {
  return [
    route({
      method: 'GET', path: '/connections', auth: 'key', summary: "The organization's connections", responses: { 200: Type.Object({ connections: Type.Array(Connection) }) },
      query: Type.Object({ provider: Type.Optional(StringEnum(PROVIDERS, { description: "only this provider's connections" })) }),
      description: 'Tokens are never returned.',
      handler: async ({ caller, query }) => json(200, connections.list(caller.orgId, query.provider ?? null)),
    }),
    route({
      method: 'POST', path: '/connections', auth: 'key', summary: 'Start a connection: open authorization_url in a browser, approve, then poll until connected', body: ConnectionCreate,
      responses: { 201: ConnectionCreated },
      description:
        'The flow is OAuth 2.0 authorization code with PKCE (S256) and a state; the provider sends the browser back to {SABLE_PUBLIC_URL}/connections/callback. ' +
        'The connection is pending until then, connected after (account_email filled), error when consent is denied or a later refresh is refused (error says why).',
      handler: async ({ caller, body }) => {
        if (!(PROVIDERS as readonly string[]).includes(body.provider)) throw badRequest(`provider must be google or atlassian (got '${body.provider}')`);
        if (body.source_type && !serves(body.provider as (typeof PROVIDERS)[number], body.source_type)) throw badRequest(`a ${body.provider} connection cannot serve ${body.source_type} sources`);
        return json(201, await connections.create(caller.orgId, body.provider as (typeof PROVIDERS)[number], body.source_type ?? null));
      },
    }),
    {
      method: 'GET', path: '/connections/callback', auth: 'none', summary: "The provider's redirect after consent (a page for the browser)",
      query: Type.Object({
        state: Type.Optional(Type.String({ description: 'the state the service sent the provider' })),
        code: Type.Optional(Type.String({ description: 'the authorization code' })),
        error: Type.Optional(Type.String({ description: "the provider's refusal (access_denied)" })),
        error_description: Type.Optional(Type.String()),
      }),
      description: 'Answers an HTML page that says whether the connection was made (400 when it was not).',
      handler: async ({ req }) => {
        const out = await connections.callback(req.query);
        const page = `<!doctype html><html><head><meta charset="utf-8"><title>Sable connection</title></head><body><h1>${out.ok ? 'Connected' : 'Not connected'}</h1><p>${escapeHtml(out.message)}</p></body></html>`;
        return { status: out.ok ? 200 : 400, headers: { 'content-type': 'text/html; charset=utf-8' }, body: page };
      },
    },
    {
      method: 'GET', path: '/connections/:connectionId', auth: 'key', summary: 'Get a connection (poll until connected or error)', responses: { 200: Connection },
      handler: async ({ caller, params }) => json(200, connections.get(caller.orgId, params.connectionId)),
    },
    {
      method: 'DELETE', path: '/connections/:connectionId', auth: 'key', summary: 'Revoke the grant at the provider and delete the connection', responses: { 204: null },
      description: 'Sources that use it fail their next run, saying the connection no longer exists.',
      handler: async ({ caller, params }) => {
        await connections.remove(caller.orgId, params.connectionId);
        return { status: 204 };
      },
    },
  ];
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
