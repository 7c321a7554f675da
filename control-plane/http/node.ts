/**
 * The node:http adapter: the product on Node 24 (no uWS binary loads there) and wherever the uWS
 * binary does not. Per request it does what uws.ts does: the path split without a URL object,
 * the query parsed and the abort signal made only when a route asks, the body read into one
 * buffer of the declared length, and the answer written with its length in one write.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { badRequest } from '../../errors/codes.js';
import { AdapterRequest } from './request.js';
import { errorResponse, failedRequest } from './status.js';
import { tooLarge, type Handler, type HttpServer, type Request, type Response, type ServerOptions } from './types.js';

export function createNodeServer(handler: Handler, opts: ServerOptions, detail: string): HttpServer {
  // node:http answers an HTTP/1.1 request without Host with a bare 400 of its own: the handler
  // below answers it instead, with the API's error body.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    try {
      serve(req, res, handler, opts);
    } catch (e) {
      // Whatever a request's synchronous part throws is that request's 500, never the process's end.
      answerFailure(res, e);
    }
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
    detail,
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

function serve(req: IncomingMessage, res: ServerResponse, handler: Handler, opts: ServerOptions): void {
  if (req.headers.host === undefined && req.httpVersion === '1.1') {
    res.setHeader('connection', 'close');
    send(res, errorResponse(badRequest('an HTTP/1.1 request needs a Host header')));
    return;
  }
  const request = new NodeRequest(req, res);
  if (opts.streams?.(request.method, request.path)) {
    request.stream = req;
    run(handler, request, (out) => {
      // Answered before the whole body arrived (a refused upload): close rather than drain it.
      if (!req.complete) res.setHeader('connection', 'close');
      send(res, out);
      if (!req.complete) res.once('finish', () => req.destroy());
    });
    return;
  }
  const length = req.headers['content-length'];
  const declared = length === undefined ? undefined : Number(length);
  if (declared !== undefined && declared > opts.maxBodyBytes) {
    res.setHeader('connection', 'close');
    send(res, tooLarge(opts.maxBodyBytes));
    req.destroy();
    return;
  }
  if (declared === 0 || (declared === undefined && req.headers['transfer-encoding'] === undefined)) {
    run(handler, request, (out) => send(res, out));
    return;
  }
  readBody(req, res, declared, opts.maxBodyBytes, (body) => {
    request.body = body;
    run(handler, request, (out) => send(res, out));
  });
}

/** Bodies up to this declared length are read into one buffer allocated up front. */
const PREALLOCATED_BODY_BYTES = 1 << 20;

/**
 * Reads a buffered body: into one buffer of the declared length when there is a small one
 * (node:http has checked it is a length and ends the body there; a large one is not reserved
 * before its bytes arrive), else chunk by chunk up to the limit.
 */
function readBody(req: IncomingMessage, res: ServerResponse, declared: number | undefined, limit: number, done: (body: Buffer) => void): void {
  const whole = declared !== undefined && declared <= PREALLOCATED_BODY_BYTES ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    if (over) return;
    if (whole) {
      chunk.copy(whole, size);
      size += chunk.length;
      return;
    }
    size += chunk.length;
    if (size > limit) {
      over = true;
      res.setHeader('connection', 'close');
      send(res, tooLarge(limit));
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (over) return;
    done(whole ? whole.subarray(0, size) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  });
}

/** Calls the handler; a throw or a rejection is answered 500 like any other internal failure. */
function run(handler: Handler, request: Request, answer: (out: Response) => void): void {
  let pending: Promise<Response>;
  try {
    pending = handler(request);
  } catch (e) {
    pending = Promise.reject(e);
  }
  pending.then(answer, (e) => answer(failedRequest(e))).catch((e) => console.error('sable: writing an answer failed:', e));
}

/** A request as the routes see it. */
class NodeRequest extends AdapterRequest {
  private controller?: AbortController;

  constructor(
    req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    const [path, query] = splitTarget(req.url ?? '/');
    // Repeated headers arrive joined with ', ' (set-cookie, the one array, is not a request header).
    super(req.method ?? 'GET', path, query, req.headers as Record<string, string>);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = (this.controller = new AbortController());
      const res = this.res;
      if (res.destroyed && !res.writableFinished) controller.abort();
      else res.once('close', () => res.writableFinished || controller.abort());
    }
    return this.controller.signal;
  }
}

/**
 * The path and query of a request target: split at `?` (node:http has already refused targets
 * with spaces or control bytes), or through a URL object where it must normalise (absolute form,
 * dot segments, backslashes).
 */
function splitTarget(target: string): [string, string] {
  if (target.charCodeAt(0) === 47 /* / */ && !target.includes('/.') && !target.includes('\\')) {
    const q = target.indexOf('?');
    return q < 0 ? [target, ''] : [target.slice(0, q), target.slice(q + 1)];
  }
  let url: URL;
  try {
    url = new URL(target, 'http://localhost');
  } catch {
    throw badRequest(`the request target '${target.slice(0, 80)}' is not a URL`);
  }
  return [url.pathname, url.search.slice(1)];
}

function send(res: ServerResponse, out: Response): void {
  if (res.headersSent || res.destroyed) {
    if (out.body instanceof Readable) out.body.destroy();
    return;
  }
  const body = out.body;
  if (body instanceof Readable) {
    try {
      res.writeHead(out.status, out.headers);
    } catch (e) {
      body.destroy();
      return answerFailure(res, e);
    }
    body.pipe(res);
    res.once('close', () => body.destroy());
    body.once('error', () => res.destroy());
    return;
  }
  const bodyless = out.status === 204 || out.status === 304;
  const length = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  try {
    // With its length the answer goes out in one write, not chunked.
    res.writeHead(out.status, bodyless ? out.headers : { ...out.headers, 'content-length': length });
  } catch (e) {
    // A header value node:http refuses (thrown from a promise callback, it ended the process once).
    return answerFailure(res, e);
  }
  res.end(bodyless ? undefined : body);
}

/** The answer to a request whose handler threw, or whose own answer could not be written. */
function answerFailure(res: ServerResponse, e: unknown): void {
  const out = failedRequest(e);
  if (res.headersSent) return void res.destroy();
  res.removeHeader('content-length');
  const body = String(out.body);
  res.writeHead(out.status, { ...out.headers, 'content-length': Buffer.byteLength(body) }).end(body);
}
