/** Intelligence sessions: chat history and the durable trace of the runs asked in them. */
import * as A from '../../answer/requests.js';
import type { SessionService } from '../../answer/sessions/service.js';
import { Type } from '@sinclair/typebox';
import { route, type Route } from '../http/router.js';
import { json } from '../http/types.js';

/** The last `limit` items (these lists have no pages: the newest matter). */
const Last = (fallback: number, max: number) => Type.Object({ limit: Type.Integer({ minimum: 1, maximum: max, default: fallback, description: 'how many, the newest' }) });

export function sessionRoutes(sessions: SessionService): Route[] {
  return [
    route({
      method: 'POST', path: '/intelligence/sessions', auth: 'key', summary: 'Create a session', body: A.SessionCreate, responses: { 201: A.Session },
      description: 'dataset_id is the default scope of queries sent with this session_id and no dataset_ids.',
      handler: async ({ caller, body }) => json(201, await sessions.create(caller.orgId, body)),
    }),
    route({
      method: 'GET', path: '/intelligence/sessions', auth: 'key', summary: "The organization's sessions, most recently active first", responses: { 200: A.SessionList },
      query: Last(50, 200),
      handler: async ({ caller, query }) => json(200, sessions.list(caller.orgId, query.limit)),
    }),
    {
      method: 'GET', path: '/intelligence/sessions/:sessionId', auth: 'key', summary: 'Get a session', responses: { 200: A.Session },
      handler: async ({ caller, params }) => json(200, sessions.get(caller.orgId, params.sessionId)),
    },
    {
      method: 'DELETE', path: '/intelligence/sessions/:sessionId', auth: 'key', summary: 'Delete a session with its messages and events', responses: { 204: null },
      handler: async ({ caller, params }) => {
        await sessions.remove(caller.orgId, params.sessionId);
        return { status: 204 };
      },
    },
    route({
      method: 'POST', path: '/intelligence/sessions/:sessionId/messages', auth: 'key', summary: 'Add a message to a session', body: A.MessageCreate, responses: { 201: A.Message },
      handler: async ({ caller, params, body }) => json(201, await sessions.addMessage(caller.orgId, params.sessionId, body)),
    }),
    route({
      method: 'GET', path: '/intelligence/sessions/:sessionId/messages', auth: 'key', summary: "A session's messages, oldest first", responses: { 200: A.MessageList },
      query: Last(50, 200),
      description: 'The last `limit` messages, in the order they were added. A query with session_id adds the question (user) and the answer (assistant, metadata run_id and sources).',
      handler: async ({ caller, params, query }) => json(200, sessions.messages(caller.orgId, params.sessionId, query.limit)),
    }),
    route({
      method: 'GET', path: '/intelligence/sessions/:sessionId/events', auth: 'key', summary: "A session's durable event history", responses: { 200: A.SessionEvents },
      query: Last(200, 1000),
      description: 'The trace events of the runs asked in this session ({events}: each event with its run_id), oldest first.',
      handler: async ({ caller, params, query }) => json(200, sessions.events(caller.orgId, params.sessionId, query.limit)),
    }),
  ];
}
