/** The node:http adapter: the fallback where the uWebSockets.js binary does not load. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { json, tooLarge, type Handler, type HttpServer, type Response, type ServerOptions } from './types.js';

export function createNodeServer(handler: Handler, opts: ServerOptions): HttpServer {
  // node:http answers an HTTP/1.1 request without Host with a bare 400 of its own: the handler
  // below answers it instead, with the API's error body.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const startedAt = process.hrtime.bigint();
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const send = (out: Response) => {
      if (res.headersSent || res.destroyed) return;
      try {
        res.writeHead(out.status, out.headers);
      } catch {
        // A header value node:http refuses: thrown from this promise callback it ended the process.
        if (out.body instanceof Readable) out.body.destroy();
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal","message":"internal error"}');
        return;
      }
      if (out.body instanceof Readable) {
        out.body.pipe(res);
        res.once('close', () => (out.body as Readable).destroy());
        out.body.once('error', () => res.destroy());
        return;
      }
      res.end(out.status === 204 ? undefined : out.body);
    };
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      res.setHeader('connection', 'close');
      send(json(400, { error: 'invalid_request', message: 'an HTTP/1.1 request needs a Host header' }));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    const headersOf = () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      return headers;
    };
    if (opts.streams?.(method, url.pathname)) {
      const sendStreamed = (out: Response) => {
        // Answered before the whole body arrived (a refused upload): close rather than drain it.
        if (!req.complete) res.setHeader('connection', 'close');
        send(out);
        if (!req.complete) res.once('finish', () => req.destroy());
      };
      handler({ method, path: url.pathname, query: url.searchParams, headers: headersOf(), body: Buffer.alloc(0), stream: req, startedAt, signal: gone.signal }).then(
        sendStreamed,
        () => sendStreamed({ status: 500, body: '{"error":"internal","message":"internal error"}' }),
      );
      return;
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > opts.maxBodyBytes) {
      res.setHeader('connection', 'close');
      send(tooLarge(opts.maxBodyBytes));
      req.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > opts.maxBodyBytes) {
        over = true;
        res.setHeader('connection', 'close');
        send(tooLarge(opts.maxBodyBytes));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (over) return;
      handler({
        method,
        path: url.pathname,
        query: url.searchParams,
        headers: headersOf(),
        body: Buffer.concat(chunks),
        startedAt,
        signal: gone.signal,
      }).then(send, () => send({ status: 500, body: '{"error":"internal","message":"internal error"}' }));
    });
  });
  // Bytes node:http cannot parse as a request get the API's error body, not its bare 400.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const [status, message] =
      err.code === 'HPE_HEADER_OVERFLOW' ? ['431 Request Header Fields Too Large', 'the request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? ['408 Request Timeout', 'the request did not arrive in time']
      : ['400 Bad Request', `the request is not valid HTTP (${err.code ?? err.message})`];
    const body = JSON.stringify({ error: 'invalid_request', message });
    socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  server.keepAliveTimeout = 65_000;
  return {
    adapter: 'node:http',
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
      });
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
