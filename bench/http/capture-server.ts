// Stands in for control-plane/http/server.js in the diagnosis's "no HTTP" runs (see
// capture-hooks.ts): keeps the service's request handler instead of serving it.
import type { Handler, HttpServer } from '../../control-plane/http/types.js';

export const captured: { handler: Handler | null } = { handler: null };

export function createHttpServer(handler: Handler): HttpServer {
  captured.handler = handler;
  return {
    adapter: 'none (handler called directly by the benchmark)',
    listen: async () => 0,
    close: async () => undefined,
  };
}
