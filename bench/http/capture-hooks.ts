// Module hooks (node:module register) for the diagnosis's "no HTTP" runs: when
// control-plane/app.js imports its HTTP server factory, it gets capture-server.js instead, so
// startService runs unchanged and hands its request handler to the benchmark.
interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;

export async function resolve(specifier: string, context: ResolveContext, nextResolve: NextResolve): Promise<{ url: string; shortCircuit?: boolean }> {
  if (specifier === './http/server.js' && context.parentURL?.endsWith('/control-plane/app.js')) {
    return { url: new URL('./capture-server.js', import.meta.url).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
