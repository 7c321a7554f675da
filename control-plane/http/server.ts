/** Picks the adapter: uWebSockets.js where its binary loads, node:http otherwise (or when asked). */
import { createNodeServer } from './node.js';
import type { Handler, HttpServer, ServerOptions } from './types.js';
import { createUwsServer, loadUws } from './uws.js';

export function createHttpServer(handler: Handler, opts: ServerOptions & { adapter: 'auto' | 'uws' | 'node' }): HttpServer {
  if (opts.adapter !== 'node') {
    const uws = loadUws();
    if (!(uws instanceof Error)) return createUwsServer(uws, handler, opts);
    if (opts.adapter === 'uws') throw new Error(`uWebSockets.js does not load here: ${uws.message}`);
  }
  return createNodeServer(handler, opts);
}
