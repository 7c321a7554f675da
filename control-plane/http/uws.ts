/**
 * The uWebSockets.js adapter. Its rules: attach the abort handler first, read every header
 * before the first await (the request object dies with the handler's synchronous part), copy
 * body chunks (their ArrayBuffers are reused), cork every write, and respect backpressure on
 * large responses with tryEnd / onWritable.
 */
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { tooLarge, STATUS_TEXT, type Handler, type HttpServer, type Request, type Response, type ServerOptions } from './types.js';

type Uws = typeof import('uWebSockets.js');
type UwsResponse = import('uWebSockets.js').HttpResponse;

/** Loads the uWS binary, or returns the reason it cannot load on this platform. */
export function loadUws(): Uws | Error {
  try {
    return createRequire(import.meta.url)('uWebSockets.js') as Uws;
  } catch (e) {
    return e as Error;
  }
}

export function createUwsServer(uws: Uws, handler: Handler, opts: ServerOptions): HttpServer {
  const app = uws.App();
  let listenSocket: import('uWebSockets.js').us_listen_socket | null = null;

  app.any('/*', (res, req) => {
    const state: State = { aborted: false };
    const gone = new AbortController();
    res.onAborted(() => {
      state.aborted = true;
      gone.abort();
      state.stream?.destroy(new Error('the client went away during the upload'));
      state.answer?.destroy();
    });
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    const request: Request = {
      method: req.getCaseSensitiveMethod().toUpperCase(),
      path: req.getUrl(),
      query: new URLSearchParams(req.getQuery() ?? ''),
      headers,
      body: Buffer.alloc(0),
      startedAt: process.hrtime.bigint(),
      signal: gone.signal,
    };
    const declared = headers['content-length'] !== undefined ? Number(headers['content-length']) : undefined;
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
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (state.aborted) return;
      size += chunk.byteLength;
      if (size > opts.maxBodyBytes) {
        respond(res, state, tooLarge(opts.maxBodyBytes), true);
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) {
        request.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        dispatch(res, state, handler, request);
      }
    });
  });

  return {
    adapter: 'uWebSockets.js',
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

interface State {
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
    // The chunk's memory is reused by uWS once this callback returns: copy it.
    if (!stream.push(Buffer.from(chunk.slice(0))) && !isLast && !paused && !state.done) {
      paused = true;
      res.pause();
    }
    if (isLast) {
      stream.push(null);
      state.stream = undefined;
    }
  });
  return stream;
}

function dispatch(res: UwsResponse, state: State, handler: Handler, req: Request): void {
  handler(req).then(
    (out) => respond(res, state, out, false),
    () => respond(res, state, { status: 500, body: '{"error":"internal","message":"internal error"}' }, false),
  );
}

function respond(res: UwsResponse, state: State, out: Response, closeAfter: boolean): void {
  if (state.aborted || state.done) return;
  state.done = true;
  // An answer before the whole streamed body arrived (a refused upload): drop the connection
  // rather than read the rest.
  if (state.stream) {
    closeAfter = true;
    state.stream.destroy();
    state.stream = undefined;
  }
  if (out.body instanceof Readable) return respondStream(res, state, out, out.body);
  const body = out.body === undefined ? Buffer.alloc(0) : typeof out.body === 'string' ? Buffer.from(out.body) : out.body;
  const ab = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  res.cork(() => {
    res.writeStatus(`${out.status} ${STATUS_TEXT[out.status] ?? ''}`);
    for (const [k, v] of Object.entries(out.headers ?? {})) res.writeHeader(k, v);
    if (closeAfter) res.writeHeader('connection', 'close');
    if (out.status === 204 || out.status === 304) {
      res.endWithoutBody();
      return;
    }
    const base = res.getWriteOffset();
    const [ok, done] = res.tryEnd(ab, ab.byteLength);
    if (ok || done) return;
    // Backpressure: the socket took part of the body; send the rest each time it drains.
    res.onWritable((offset) => {
      const [sent] = res.tryEnd(ab.slice(offset - base), ab.byteLength);
      return sent;
    });
  });
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
    for (const [k, v] of headers) if (k !== length?.[0]) res.writeHeader(k, v);
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

