/**
 * The dashboard's routes: a session token from an API key, and previews of items before they are
 * ingested (metadata of s3://, gs://, gdrive:// and https:// addresses; a Drive file's bytes).
 * The preview routes take session tokens only; API keys are refused there, as session tokens are
 * on the API routes.
 */
import { Type } from '@sinclair/typebox';
import type { SourcePreviews } from '../../ingest/sources/previews.js';
import { bearerToken, type SessionTokens } from '../auth/sessions.js';
import { route, type Route } from '../http/router.js';
import { json } from '../http/types.js';
import { headerSafe } from './documents.js';

const PathInfo = Type.Object({
  source_path: Type.String(),
  source_id: Type.Union([Type.String(), Type.Null()], { description: 'the source whose credentials read it' }),
  name: Type.String(),
  size: Type.Union([Type.Integer(), Type.Null()]),
  content_type: Type.Union([Type.String(), Type.Null()]),
  modified_at: Type.Union([Type.String(), Type.Null()]),
  readable: Type.Boolean(),
  error: Type.Optional(Type.String()),
});

export function dashboardRoutes(sessions: SessionTokens, previews: SourcePreviews): Route[] {
  return [
    {
      method: 'POST', path: '/auth/sessions', auth: 'key', summary: 'A dashboard session token for this API key (one hour)',
      responses: {
        201: Type.Object({
          token: Type.String(),
          expires_at: Type.String(),
          role: Type.Union([Type.Literal('admin'), Type.Literal('member')], { description: "the key's role: what the dashboard may offer" }),
          org_id: Type.String(),
        }),
      },
      description: 'Send it as Authorization: Bearer <token> to the dashboard routes. Revoking the key ends its sessions; DELETE /auth/sessions ends this one.',
      handler: async ({ caller }) => json(201, sessions.issue(caller)),
    },
    {
      method: 'DELETE', path: '/auth/sessions', auth: 'session', summary: 'End the dashboard session whose token is sent (sign out)',
      responses: { 204: null },
      description: 'The token is refused from then on, also after a restart; other sessions of the same key go on.',
      handler: async ({ req }) => {
        await sessions.end(bearerToken(req.headers.authorization)!);
        return { status: 204 };
      },
    },
    route({
      method: 'GET', path: '/sources/info', auth: 'session', summary: "An item's name, size, type, modification time and whether it can be read",
      responses: { 200: PathInfo },
      query: Type.Object({ source_path: Type.String({ minLength: 1, description: 's3://bucket/key, gs://bucket/object, gdrive://fileId or https://...' }) }),
      description: "Read with the credentials of the organization's sources of that type (and bucket).",
      handler: async ({ caller, query }) => json(200, await previews.info(caller.orgId, query.source_path)),
    }),
    route({
      method: 'POST', path: '/sources/batch-info', auth: 'session', summary: 'sources/info for up to 100 addresses', body: Type.Object({ source_paths: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 }) }),
      responses: { 200: Type.Object({ results: Type.Array(PathInfo) }) },
      handler: async ({ caller, body }) => json(200, await previews.batch(caller.orgId, body.source_paths)),
    }),
    {
      method: 'GET', path: '/sources/stream/gdrive/:fileId', auth: 'session', summary: "A Drive file's bytes (Google Docs as text, Sheets as CSV)",
      description: '410 document_unavailable when no gdrive source of the organization can read it.',
      handler: async ({ caller, params }) => {
        const out = await previews.streamDrive(caller.orgId, params.fileId);
        return {
          status: 200,
          headers: { 'content-type': headerSafe(out.contentType), 'content-disposition': `inline; filename*=UTF-8''${encodeURIComponent(out.name)}`, ...(out.size !== null ? { 'content-length': String(out.size) } : {}) },
          body: out.stream,
        };
      },
    },
  ];
}
