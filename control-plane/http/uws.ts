/**
 * The uWebSockets.js adapter. Its rules: attach the abort handler first, read every header
 * before the first await (the request object dies with the handler's synchronous part), copy
 * body chunks (their ArrayBuffers are reused), cork every write, and respect backpressure on
 * large responses with tryEnd / onWritable. A throw in any of uWS's callbacks would end the
 * process: each is guarded, and the request gets a 500 instead.
 */
import { Readable } from 'node:stream';
import { badRequest } from '../../errors/codes.js';
import { AdapterRequest, EMPTY_BODY } from './request.js';
import { errorResponse, failedRequest } from './status.js';
import { tooLarge, STATUS_TEXT, type Handler, type HttpServer, type Request, type Response, type ServerOptions } from './types.js';
import type { LoadedUws } from './uws-binary.js';

type UwsResponse = import('uWebSockets.js').HttpResponse;

export function createUwsServer({ uws, source }: LoadedUws, handler: Handler, opts: ServerOptions): HttpServer {
  const app = uws.App();
  let listenSocket: import('uWebSockets.js').us_listen_socket | null = null;

  app.any('/*', (res, req) => {
    const state: State = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
      state.request?.abort();
      state.stream?.destroy(new Error('the client went away during the upload'));
      state.answer?.destroy();
    });
    try {
      accept(res, req, state, handler, opts);
    } catch (e) {
      respond(res, state, failedRequest(e), true);
    }
  });

  return {
    adapter: 'uWebSockets.js',
    detail: `native binary ${source}`,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`));
          listenSocket = socket;
          resolve(uws.us_socket_local_port(socket));
        });
      });
    },
    async close() {
      if (listenSocket) uws.us_listen_socket_close(listenSocket);
      listenSocket = null;
    },
  };
}

/** A request's synchronous part: read it while uWS's request object lives, then body and handler. */
function accept(res: UwsResponse, req: import('uWebSockets.js').HttpRequest, state: State, handler: Handler, opts: ServerOptions): void {
  const request = (state.request = new UwsRequest(req));
  const headers = request.headers;
  const length = headers['content-length'];
  // uWS hands any Content-Length on (-1, 1e3, abc): a buffer of a negative length threw here,
  // in uWS's callback, and ended the process.
  if (length !== undefined && !/^\d{1,15}$/.test(length)) {
    respond(res, state, errorResponse(badRequest(`Content-Length '${length.slice(0, 40)}' is not a length in bytes`)), true);
    return;
  }
  const declared = length !== undefined ? Number(length) : undefined;
  if (opts.streams?.(request.method, request.path)) {
    request.stream = state.stream = bodyStream(res, state, !declared && headers['transfer-encoding'] === undefined);
    dispatch(res, state, handler, request);
    return;
  }
  if (declared !== undefined && declared > opts.maxBodyBytes) {
    respond(res, state, tooLarge(opts.maxBodyBytes), true);
    return;
  }
  if (!declared && headers['transfer-encoding'] === undefined) {
    dispatch(res, state, handler, request);
    return;
  }
  readBody(res, state, handler, declared, opts.maxBodyBytes);
}

const METHODS: Record<string, string> = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE', head: 'HEAD', options: 'OPTIONS' };

/** Headers are read into this object by a callback made once (no closure per request). */
let collecting: Record<string, string> = {};
const collectHeader = (k: string, v: string) => {
  collecting[k] = v;
};

/** A request as the routes see it, read from uWS's request object before it dies. */
class UwsRequest extends AdapterRequest {
  private controller?: AbortController;
  private gone = false;

  constructor(req: import('uWebSockets.js').HttpRequest) {
    const m = req.getMethod();
    collecting = {};
    req.forEach(collectHeader);
    super(METHODS[m] ?? m.toUpperCase(), req.getUrl(), req.getQuery() ?? '', collecting);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    this.gone = true;
    this.controller?.abort();
  }
}

/**
 * Reads a buffered body: into one buffer of the declared length when there is one (a single
 * copy out of uWS's reused chunk memory), else chunk by chunk.
 */
function readBody(res: UwsResponse, state: State, handler: Handler, declared: number | undefined, limit: number): void {
  const request = state.request!;
  if (declared !== undefined) {
    const body = Buffer.allocUnsafe(declared);
    let size = 0;
    res.onData((chunk, isLast) => {
      if (state.aborted || state.done) return;
      if (size + chunk.byteLength > declared) {
        respond(res, state, errorResponse(badRequest('the body is longer than its Content-Length')), true);
        return;
      }
      body.set(new Uint8Array(chunk), size);
      size += chunk.byteLength;
      if (isLast) {
        request.body = size === declared ? body : body.subarray(0, size);
        dispatch(res, state, handler, request);
      }
    });
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    if (state.aborted || state.done) return;
    size += chunk.byteLength;
    if (size > limit) {
      respond(res, state, tooLarge(limit), true);
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      request.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      dispatch(res, state, handler, request);
    }
  });
}

interface State {
  request?: UwsRequest;
  aborted: boolean;
  done?: boolean;
  /** A streamed answer being sent. */
  answer?: Readable;
  /** The body stream of a streamed route, until it ends. */
  stream?: Readable;
}

/** The request body as a Readable: uWS pauses the socket while the reader is behind. */
function bodyStream(res: UwsResponse, state: State, empty: boolean): Readable {
  let paused = false;
  const stream = new Readable({
    highWaterMark: 1 << 20,
    read() {
      if (paused && !state.aborted && !state.done) {
        paused = false;
        res.resume();
      }
    },
  });
  // Destroyed with an error before a consumer attached (the client went away early): not a crash.
  stream.on('error', () => {});
  if (empty) {
    stream.push(null);
    return stream;
  }
  res.onData((chunk, isLast) => {
    if (state.aborted || stream.destroyed) return;
    try {
      // The chunk's memory is reused by uWS once this callback returns: copy it.
      if (!stream.push(Buffer.from(chunk.slice(0))) && !isLast && !paused && !state.done) {
        paused = true;
        res.pause();
      }
      if (isLast) {
        stream.push(null);
        state.stream = undefined;
      }
    } catch (e) {
      // A reader of the body threw as the chunk reached it (push emits 'data' synchronously).
      respond(res, state, failedRequest(e), true);
    }
  });
  return stream;
}

/** Calls the handler; a throw or a rejection is answered like any other failure. */
function dispatch(res: UwsResponse, state: State, handler: Handler, req: Request): void {
  let pending: Promise<Response>;
  try {
    pending = handler(req);
  } catch (e) {
    pending = Promise.reject(e);
  }
  pending.then(
    (out) => respond(res, state, out, false),
    (e) => respond(res, state, failedRequest(e), false),
  );
}

/** Sends an answer; never throws (it runs in uWS's callbacks and in promise callbacks). */
function respond(res: UwsResponse, state: State, out: Response, closeAfter: boolean): void {
  if (state.aborted || state.done) return;
  state.done = true;
  const problem = headerProblem(out.headers);
  if (problem) {
    if (out.body instanceof Readable) out.body.destroy();
    out = failedRequest(new Error(`an answer's header cannot be sent: ${problem}`));
  }
  try {
    write(res, state, out, closeAfter);
  } catch (e) {
    console.error('sable: writing an answer failed:', e);
    res.close();
  }
}

function write(res: UwsResponse, state: State, out: Response, closeAfter: boolean): void {
  // An answer before the whole streamed body arrived (a refused upload): drop the connection
  // rather than read the rest.
  if (state.stream) {
    closeAfter = true;
    state.stream.destroy();
    state.stream = undefined;
  }
  if (out.body instanceof Readable) return respondStream(res, state, out, out.body);
  answering = { res, out, body: out.body ?? EMPTY_BODY, closeAfter };
  try {
    res.cork(writeAnswer);
  } finally {
    answering = undefined;
  }
}

/**
 * Why these headers cannot go out as they are, or null. uWS writes what it is given: a value
 * with a line break would end the head early, and one that is neither a string nor a number
 * (sent as its decimal string, as node:http does) throws.
 */
function headerProblem(headers: Record<string, string> | undefined): string | null {
  for (const k in headers) {
    const v = headers[k] as unknown;
    if (typeof v === 'number') continue;
    if (typeof v !== 'string') return `${k} is a ${typeof v}, not a string`;
    if (!HEADER_NAME.test(k) || /[\r\n\0]/.test(v)) return `${JSON.stringify(k)} or its value has characters a header cannot carry`;
  }
  return null;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** What writeAnswer sends: set just before the cork that runs it (no closure per answer). */
let answering: { res: UwsResponse; out: Response; body: Buffer | string; closeAfter: boolean } | undefined;

/** Up to this size an answer goes out with end(): uWS keeps what the socket does not take yet. */
const END_AT_ONCE = 64 * 1024;

function writeAnswer(): void {
  const { res, out, body, closeAfter } = answering!;
  res.writeStatus(statusLine(out.status));
  for (const k in out.headers) res.writeHeader(k, String(out.headers[k]));
  if (closeAfter) res.writeHeader('connection', 'close');
  if (out.status === 204 || out.status === 304) {
    res.endWithoutBody();
    return;
  }
  if (typeof body === 'string' ? body.length <= END_AT_ONCE / 3 : body.byteLength <= END_AT_ONCE) {
    res.end(body);
    return;
  }
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const base = res.getWriteOffset();
  const [ok, done] = res.tryEnd(bytes, bytes.byteLength);
  if (ok || done) return;
  // Backpressure: the socket took part of the body; send the rest each time it drains.
  res.onWritable((offset) => {
    const [sent] = res.tryEnd(bytes.subarray(offset - base), bytes.byteLength);
    return sent;
  });
}

const statusLines = new Map<number, string>();
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) statusLines.set(status, (line = `${status} ${STATUS_TEXT[status] ?? ''}`));
  return line;
}

/**
 * A streamed answer: chunks are written as they come; a full socket pauses the stream. With a
 * Content-Length the body goes out with that length (tryEnd, as uWS wants it), else chunked.
 */
function respondStream(res: UwsResponse, state: State, out: Response, body: Readable): void {
  state.answer = body;
  const headers = Object.entries(out.headers ?? {});
  const length = headers.find(([k]) => k.toLowerCase() === 'content-length');
  const total = length ? Number(length[1]) : undefined;
  let complete = false;
  res.cork(() => {
    res.writeStatus(`${out.status} ${STATUS_TEXT[out.status] ?? ''}`);
    for (const [k, v] of headers) if (k !== length?.[0]) res.writeHeader(k, String(v));
  });
  const send = (ab: ArrayBuffer): boolean => {
    if (total === undefined) return res.write(ab);
    const base = res.getWriteOffset();
    const [ok, done] = res.tryEnd(ab, total);
    complete ||= done;
    if (ok || done) return true;
    body.pause();
    res.onWritable((offset) => {
      const [sent, finished] = res.tryEnd(ab.slice(offset - base), total);
      complete ||= finished;
      if (sent && !finished) body.resume();
      return sent;
    });
    return true;
  };
  body.on('data', (chunk: Buffer | string) => {
    if (state.aborted) return;
    try {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      let ok = true;
      res.cork(() => (ok = send(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer)));
      if (!ok) {
        body.pause();
        res.onWritable(() => {
          body.resume();
          return true;
        });
      }
    } catch (e) {
      console.error('sable: writing a streamed answer failed:', e);
      body.destroy();
      res.close();
    }
  });
  body.on('end', () => {
    if (state.aborted) return;
    if (total === undefined) res.cork(() => res.end());
    // With a length, the last tryEnd ended the answer; a body shorter than it said cannot end well.
    else if (!complete) res.close();
  });
  body.on('error', () => {
    if (!state.aborted) res.close();
  });
}

