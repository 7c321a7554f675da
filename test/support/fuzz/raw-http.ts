// Requests written byte by byte on a socket: what fetch refuses to send (CR LF inside headers,
// dot segments, lying Content-Length, broken chunked encoding, bytes that are not UTF-8).
import { connect } from 'node:net';

export interface RawAnswer {
  /** null: the connection closed (or timed out) before a status line arrived. */
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** The body's bytes (a msgpack error is not text). */
  bytes: Buffer;
  /** The service neither answered nor closed within the time bound. */
  timedOut: boolean;
}

/** Writes `parts` (with `gapMs` between them) and reads until the peer closes or `timeoutMs`. */
export function rawRequest(url: string, parts: (string | Buffer)[], timeoutMs = 15_000, gapMs = 0): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) });
    let settled = false;
    const finish = (timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parse(Buffer.concat(chunks)), timedOut: timedOut && chunks.length === 0 });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('data', (c) => {
      chunks.push(c);
      // One answer is all a case reads: stop once the headers and a declared body are in.
      const got = parse(Buffer.concat(chunks));
      const length = Number(got.headers['content-length']);
      if (got.status !== null && Number.isFinite(length) && Buffer.byteLength(got.body) >= length) finish(false);
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('connect', async () => {
      for (const p of parts) {
        if (socket.destroyed) return;
        socket.write(p);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

function parse(raw: Buffer): Omit<RawAnswer, 'timedOut'> {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!m || end < 0) return { status: null, headers: {}, body: '', bytes: Buffer.alloc(0) };
  const headers: Record<string, string> = {};
  for (const line of text.slice(0, end).split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  return { status: Number(m[1]), headers, body: body.toString('utf8'), bytes: body };
}

function dechunk(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(b.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(b.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** A request head: the request line, the headers, the blank line. */
export function head(method: string, target: string, headers: Record<string, string | number>): string {
  return `${method} ${target} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}
