// A bare uWebSockets.js server, in its own forked process: the ceiling of the uWS adapter's HTTP
// stack on this machine. GET /hello answers a fixed small JSON body; POST /hello reads the whole
// request body (as the service's adapter does: copied chunks) and answers the same fixed body.
// uWS comes from the service's own loader (its native binary or nothing, never the package's JS
// emulation); where none loads the child says why and exits.
import type { us_listen_socket } from 'uWebSockets.js';
import { loadUws } from '../../control-plane/http/uws-binary.js';
import { send, serveOrchestrator } from './server-child.js';

const BODY = '{"status":"ok","results":[]}';

const loaded = loadUws();
if (loaded instanceof Error) {
  send({ type: 'failed', message: loaded.message });
  process.exit(1);
}
const { uws, source } = loaded;

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

let socket: us_listen_socket | null = null;
app.listen('127.0.0.1', 0, (s) => {
  if (!s) {
    send({ type: 'failed', message: 'bare uWS: cannot listen' });
    process.exit(1);
  }
  socket = s;
  const port = uws.us_socket_local_port(s);
  send({ type: 'ready', url: `http://127.0.0.1:${port}`, port, adapter: 'uWebSockets.js (bare)', detail: `native binary ${source}` });
});

serveOrchestrator(() => {
  if (socket) uws.us_listen_socket_close(socket);
  socket = null;
});
