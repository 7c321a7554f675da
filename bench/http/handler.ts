// Diagnosis only: the service's request handler without any HTTP server, in the benchmark
// process, on the service's data directory (after the service process has stopped).
// startService runs unchanged; a module hook swaps its HTTP server factory for one that hands
// the handler over (capture-hooks.ts), so the route, authentication, stores, engine and search
// pool are the service's own, and requests reach the handler as the adapters would pass them.
// What remains between this and the service over HTTP is the adapter, the sockets and the client.
import { register } from 'node:module';
import type { Handler } from '../../control-plane/http/types.js';

export interface BareHandler {
  handle: Handler;
  close(): Promise<void>;
}

export async function openHandler(dataDir: string, threads: number): Promise<BareHandler> {
  register('./capture-hooks.js', import.meta.url);
  const { startService } = await import('../../control-plane/app.js');
  const { loadConfig } = await import('../../control-plane/config.js');
  const { captured } = await import('./capture-server.js');
  const svc = await startService(loadConfig({ host: '127.0.0.1', port: '0', 'data-dir': dataDir, 'search-threads': String(threads) }, {}));
  if (!captured.handler) throw new Error('the module hook did not capture the service handler (control-plane/app.js changed how it creates its server?)');
  return { handle: captured.handler, close: () => svc.close() };
}
