// Stands in for control-plane/http/server.js in the diagnosis's "no HTTP" runs (see
// capture-hooks.ts): keeps the service's request handler instead of serving it.
import type { Adapter } from '../../control-plane/http/server.js';
import type { Handler, HttpServer } from '../../control-plane/http/types.js';

/** Stands in for the picker startService calls before it opens anything. */
export function pickAdapter(): Adapter {
  return { node: 'none (handler called directly by the benchmark)' };
}

export const captured: { handler: Handler | null } = { handler: null };

export function createHttpServer(handler: Handler): HttpServer {
  captured.handler = handler;
  return {
    adapter: 'none (handler called directly by the benchmark)',
    detail: 'the benchmark calls the handler',
    listen: async () => 0,
    close: async () => undefined,
  };
}
