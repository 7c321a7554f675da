/** The node:http adapter: the fallback where the uWebSockets.js binary does not load. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { tooLarge, type Handler, type HttpServer, type Response, type ServerOptions } from './types.js';

export function createNodeServer(handler: Handler, opts: ServerOptions): HttpServer {
  const server = createServer((req, res) => {
    const startedAt = process.hrtime.bigint();
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const send = (out: Response) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(out.status, out.headers);
      if (out.body instanceof Readable) {
        out.body.pipe(res);
        res.once('close', () => (out.body as Readable).destroy());
        out.body.once('error', () => res.destroy());
        return;
      }
      res.end(out.status === 204 ? undefined : out.body);
    };
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
