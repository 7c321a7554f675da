// The load generator's HTTP clients. One `Conn` carries one request at a time (closed loop).
//   net    raw HTTP/1.1 over one keep-alive node:net socket: the request (head + body) is
//          prebuilt into one buffer and written with one call; the response is parsed just
//          enough (status, content-length or chunked) to find its end. The cheapest client,
//          so the service gets most of the two shared cores.
//   http   node:http with a keep-alive Agent (maxSockets = concurrency).
//   fetch  the global fetch (undici), its default keep-alive pool.
import http from 'node:http';
import net from 'node:net';
import type { ClientKind } from './config.js';

/** One request, in both shapes: the raw bytes (net) and the parts (http, fetch). */
export interface Prepared {
  raw: Buffer;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

export type Done = (err: Error | null, status: number, body: Buffer | null) => void;

export interface Conn {
  send(req: Prepared, wantBody: boolean, done: Done): void;
  close(): void;
}

export function prepare(host: string, port: number, method: string, path: string, headers: Record<string, string>, body: Buffer | null): Prepared {
  const all: Record<string, string> = { host: `${host}:${port}`, ...headers };
  if (body) all['content-length'] = String(body.length);
  let head = `${method} ${path} HTTP/1.1\r\n`;
  for (const [k, v] of Object.entries(all)) head += `${k}: ${v}\r\n`;
  head += '\r\n';
  const headBuf = Buffer.from(head, 'latin1');
  return { raw: body ? Buffer.concat([headBuf, body]) : headBuf, method, path, headers, body };
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

class NetConn implements Conn {
  private buf: Buffer | null = null;
  private done: Done | null = null;
  private wantBody = false;
  private headerEnd = -1;
  private status = 0;
  private length = -1; // content-length, or -1 when chunked
  private closed = false;

  constructor(private readonly sock: net.Socket) {
    sock.setNoDelay(true);
    sock.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (e: Error) => {
      this.closed = true;
      const d = this.done;
      this.done = null;
      d?.(e, 0, null);
    };
    sock.on('error', fail);
    sock.on('close', () => fail(new Error('connection closed by the server')));
  }

  static open(host: string, port: number): Promise<NetConn> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port });
      s.once('connect', () => {
        s.removeListener('error', reject);
        resolve(new NetConn(s));
      });
      s.once('error', reject);
    });
  }

  send(req: Prepared, wantBody: boolean, done: Done): void {
    if (this.closed) {
      done(new Error('connection closed'), 0, null);
      return;
    }
    this.done = done;
    this.wantBody = wantBody;
    this.sock.write(req.raw);
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf === null ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      const b: Buffer | null = this.buf;
      if (b === null) return;
      if (this.headerEnd < 0) {
        const i = b.indexOf(CRLFCRLF);
        if (i < 0) return;
        const head = b.toString('latin1', 0, i);
        this.status = Number(head.slice(9, 12));
        const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
        if (cl) this.length = Number(cl[1]);
        else if (/\r\ntransfer-encoding: *chunked/i.test(head)) this.length = -1;
        else this.length = 0;
        this.headerEnd = i + 4;
      }
      let body: Buffer;
      let end: number;
      if (this.length >= 0) {
        end = this.headerEnd + this.length;
        if (b.length < end) return;
        body = b.subarray(this.headerEnd, end);
      } else {
        const parsed = dechunk(b, this.headerEnd);
        if (!parsed) return;
        ({ body, end } = parsed);
      }
      this.buf = end < b.length ? b.subarray(end) : null;
      this.headerEnd = -1;
      const d = this.done;
      this.done = null;
      // Copy only what the caller keeps (the socket's chunks are otherwise dropped); an error's
      // body always, so a caller can tell which error it was.
      d?.(null, this.status, this.wantBody || this.status >= 400 ? Buffer.from(body) : null);
    }
  }

  close(): void {
    this.closed = true;
    this.sock.destroy();
  }
}

/** A complete chunked body starting at `from`, or null when more bytes are needed. */
function dechunk(b: Buffer, from: number): { body: Buffer; end: number } | null {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const eol = b.indexOf('\r\n', at, 'latin1');
    if (eol < 0) return null;
    const size = parseInt(b.toString('latin1', at, eol), 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    const start = eol + 2;
    if (size === 0) {
      // No trailers from our servers: the terminating CRLF follows.
      if (b.length < start + 2) return null;
      return { body: Buffer.concat(parts), end: start + 2 };
    }
    if (b.length < start + size + 2) return null;
    parts.push(b.subarray(start, start + size));
    at = start + size + 2;
  }
}

class HttpConn implements Conn {
  constructor(
    private readonly agent: http.Agent,
    private readonly host: string,
    private readonly port: number,
  ) {}

  send(req: Prepared, wantBody: boolean, done: Done): void {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body) headers['content-length'] = String(req.body.length);
    const r = http.request({ agent: this.agent, host: this.host, port: this.port, method: req.method, path: req.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        if (wantBody) chunks.push(c);
      });
      res.on('end', () => done(null, res.statusCode ?? 0, wantBody ? Buffer.concat(chunks) : null));
      res.on('error', (e) => done(e, 0, null));
    });
    r.on('error', (e) => done(e, 0, null));
    r.end(req.body ?? undefined);
  }

  close(): void {}
}

class FetchConn implements Conn {
  constructor(private readonly base: string) {}

  send(req: Prepared, wantBody: boolean, done: Done): void {
    fetch(this.base + req.path, { method: req.method, headers: req.headers, body: req.body ? new Uint8Array(req.body.buffer as ArrayBuffer, req.body.byteOffset, req.body.length) : undefined }).then(
      async (res) => {
        const ab = await res.arrayBuffer();
        done(null, res.status, wantBody ? Buffer.from(ab) : null);
      },
      (e: Error) => done(e, 0, null),
    );
  }

  close(): void {}
}

/** `count` connections of one kind to host:port (net: sockets opened now; http: one shared agent). */
export async function openConns(kind: ClientKind, host: string, port: number, count: number): Promise<{ conns: Conn[]; close(): void }> {
  if (kind === 'net') {
    const conns = await Promise.all(Array.from({ length: count }, () => NetConn.open(host, port)));
    return { conns, close: () => conns.forEach((c) => c.close()) };
  }
  if (kind === 'http') {
    const agent = new http.Agent({ keepAlive: true, maxSockets: count, maxFreeSockets: count });
    const conns = Array.from({ length: count }, () => new HttpConn(agent, host, port));
    return { conns, close: () => agent.destroy() };
  }
  const conns = Array.from({ length: count }, () => new FetchConn(`http://${host}:${port}`));
  return { conns, close: () => undefined };
}
