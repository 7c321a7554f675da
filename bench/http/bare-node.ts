// A bare node:http server, in its own forked process: the ceiling of the node:http adapter's HTTP
// stack on this machine, the counterpart of bare-uws.ts (same routes, same fixed body, same
// messages). GET /hello answers the fixed small JSON body; POST /hello reads the whole request
// body first. The answer carries its length, in one write, as the service's node:http adapter
// writes its answers, and idle connections live as long as there (keepAliveTimeout).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { send, serveOrchestrator } from './server-child.js';

const BODY = Buffer.from('{"status":"ok","results":[]}');

function answer(res: ServerResponse, extra: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(BODY.length), ...extra });
  res.end(BODY);
}

const server = createServer((req, res) => {
  if (req.url !== '/hello') {
    res.writeHead(404).end();
  } else if (req.method === 'GET') {
    answer(res);
  } else {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      answer(res, { 'x-body-bytes': String(body.length) });
    });
  }
});
server.keepAliveTimeout = 65_000;
server.on('error', (e) => {
  send({ type: 'failed', message: `bare node:http: ${e.message}` });
  process.exit(1);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  send({ type: 'ready', url: `http://127.0.0.1:${port}`, port, adapter: 'node:http (bare)', detail: `node:http of Node ${process.version}` });
});

serveOrchestrator(() => {
  server.closeAllConnections();
  server.close();
});
