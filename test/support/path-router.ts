// One local address in front of several local peers: each request is forwarded whole to the peer
// whose path prefix it starts with, else to the fallback. For a setting that names one URL for two
// APIs: the Atlassian gateway (atlassian-api-url) serves both Jira and Confluence, whose test peers
// are separate servers.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startPathRouter(routes: [prefix: string, target: string][], fallback: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const target = new URL(routes.find(([prefix]) => req.url!.startsWith(prefix))?.[1] ?? fallback);
    const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.headersSent ? res.destroy() : res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
