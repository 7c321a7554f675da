/**
 * Picks the adapter honestly: uWebSockets.js only where its native binary loads, node:http
 * otherwise (or when asked). Asking for uws where no binary loads fails the start, before the
 * service opens anything.
 */
import { configError } from '../../errors/codes.js';
import { createNodeServer } from './node.js';
import type { Handler, HttpServer, ServerOptions } from './types.js';
import { createUwsServer } from './uws.js';
import { loadUws, type LoadedUws } from './uws-binary.js';

export type AdapterChoice = 'auto' | 'uws' | 'node';

/** The adapter a choice gets on this Node: the loaded uWS, or node:http and why. */
export type Adapter = { uws: LoadedUws } | { node: string };

export function pickAdapter(choice: AdapterChoice): Adapter {
  if (choice === 'node') return { node: 'chosen by SABLE_HTTP_ADAPTER=node' };
  const uws = loadUws();
  if (!(uws instanceof Error)) return { uws };
  if (choice === 'uws') throw configError(`SABLE_HTTP_ADAPTER=uws, but ${uws.message}. Set SABLE_HTTP_ADAPTER=auto or node to serve on node:http`);
  return { node: `uWebSockets.js not used: ${uws.message}` };
}

export function createHttpServer(handler: Handler, opts: ServerOptions & { adapter: Adapter }): HttpServer {
  return 'uws' in opts.adapter ? createUwsServer(opts.adapter.uws, handler, opts) : createNodeServer(handler, opts, opts.adapter.node);
}
