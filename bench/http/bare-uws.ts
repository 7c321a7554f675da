// A bare uWebSockets.js server, in its own forked process: the HTTP stack's ceiling on this
// machine. GET /hello answers a fixed small JSON body; POST /hello reads the whole request body
// (as the service's adapter does: copied chunks) and answers the same fixed body.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { FromServer, ToServer } from './protocol.js';

type Uws = typeof import('uWebSockets.js');
const uws = createRequire(import.meta.url)('uWebSockets.js') as Uws;
const BODY = '{"status":"ok","results":[]}';
// The package falls back to a pure-JS server when its binary does not load; say which one runs.
const native = String(uws.App).includes('[native code]');

function send(m: FromServer): void {
  if (process.connected) process.send!(m);
}

const app = uws.App();
app.get('/hello', (res) => {
  res.cork(() => {
    res.writeHeader('content-type', 'application/json');
    res.end(BODY);
  });
});
app.post('/hello', (res) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  const chunks: Buffer[] = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!last || aborted) return;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    res.cork(() => {
      res.writeHeader('content-type', 'application/json');
      res.writeHeader('x-body-bytes', String(body.length));
      res.end(BODY);
    });
  });
});

let socket: import('uWebSockets.js').us_listen_socket | null = null;
app.listen('127.0.0.1', 0, (s) => {
  if (!s) {
    send({ type: 'failed', message: 'bare uWS: cannot listen' });
    process.exit(1);
  }
  socket = s;
  const port = uws.us_socket_local_port(s);
  send({ type: 'ready', url: `http://127.0.0.1:${port}`, port, adapter: 'uWebSockets.js (bare)', native });
});

const stop = () => {
  if (socket) uws.us_listen_socket_close(socket);
  socket = null;
  send({ type: 'closed' });
  process.exit(0);
};
process.on('message', (m: ToServer) => {
  if (m.type === 'usage') send({ type: 'usage', usage: { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() } });
  else if (m.type === 'close') stop();
});
process.on('disconnect', stop);
