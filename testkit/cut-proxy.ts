/**
 * A TCP front for the S3 server that cuts connections mid-transfer, as a reset or a dropped
 * peer would end them, and notes the request line of every request it passes on. Two triggers:
 * `arm` cuts the connection that next carries so many bytes in one direction (up: client to
 * server, a request body; down: server to client, a response body), for bench/s3/run.ts's fault
 * probe; `cutRequests` cuts the requests whose request line matches (a given multipart part,
 * say), for test/objects/. What the client then does (fail, retry, store a truncated object)
 * is what the caller checks.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

const REQUEST_LINE = /^(GET|PUT|POST|DELETE|HEAD) (\S+) HTTP\/1\.[01]\r\n/;

export class CutProxy {
  private server: Server | null = null;
  private armed: { direction: 'up' | 'down'; bytes: number } | null = null;
  private rules: { match: RegExp; times: number; afterBytes: number; status?: number }[] = [];
  private readonly sockets = new Set<Socket>();
  cuts = 0;
  /** Request lines passed on or cut, in order: "PUT /bucket/key?partNumber=2&uploadId=…". */
  readonly requests: string[] = [];

  constructor(private readonly target: URL) {}

  async start(): Promise<string> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      this.sockets.add(client).add(upstream);
      // Bytes of the current request still let through before its connection is cut (null: not to be cut).
      let cutIn: number | null = null;
      // The proxy answered this connection itself: what the client still sends is dropped.
      let answered = false;
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      const cut = () => {
        this.cuts++;
        client.resetAndDestroy();
        upstream.destroy();
      };
      const answer = (status: number) => {
        answered = true;
        upstream.destroy();
        client.resume();
        const code = status === 503 ? 'SlowDown' : status === 403 ? 'AccessDenied' : 'InternalError';
        const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>answered by the test proxy</Message></Error>`;
        // Half-closed: the client may still be sending its body, which is read and dropped until it hangs up.
        client.end(`HTTP/1.1 ${status} ${code}\r\ncontent-type: application/xml\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      };
      const relay = (from: Socket, to: Socket, direction: 'up' | 'down') => {
        from.on('data', (chunk: Buffer) => {
          if (answered) return;
          if (direction === 'up') {
            // A request's line starts the chunk it arrives in: the client waits for each answer first.
            const line = REQUEST_LINE.exec(chunk.subarray(0, 4096).toString('latin1'));
            if (line) {
              this.requests.push(`${line[1]} ${line[2]}`);
              const rule = this.rules.find((r) => r.times > 0 && r.match.test(`${line[1]} ${line[2]}`));
              if (rule) rule.times--;
              cutIn = rule && rule.status === undefined ? rule.afterBytes : null;
              if (rule?.status !== undefined) return answer(rule.status);
            }
            if (cutIn !== null) {
              if (chunk.length > cutIn) return cut();
              cutIn -= chunk.length;
            }
          }
          const a = this.armed;
          if (a && a.direction === direction) {
            a.bytes -= chunk.length;
            if (a.bytes <= 0) {
              this.armed = null;
              return cut();
            }
          }
          if (!to.write(chunk)) {
            from.pause();
            to.once('drain', () => from.resume());
          }
        });
      };
      relay(client, upstream, 'up');
      relay(upstream, client, 'down');
      client.on('close', end).on('error', end);
      upstream.on('close', () => answered || end()).on('error', () => answered || end());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address() as { port: number };
    return `http://127.0.0.1:${address.port}`;
  }

  /** The next connection to pass `bytes` more in `direction` is cut. */
  arm(direction: 'up' | 'down', bytes: number): void {
    this.armed = { direction, bytes };
  }

  /**
   * The next `times` requests whose line ("PUT /bucket/key?partNumber=2&uploadId=…") matches are
   * cut once `afterBytes` of them (request line and headers included) have passed: 0 cuts
   * before the server sees any of it.
   */
  cutRequests(match: RegExp, times = 1, afterBytes = 0): void {
    this.rules.push({ match, times, afterBytes });
  }

  /** The next `times` requests whose line matches are answered `status` (503: SlowDown, 403: AccessDenied) by the proxy, unseen by the server. */
  answerRequests(match: RegExp, status: number, times = 1): void {
    this.rules.push({ match, times, afterBytes: 0, status });
  }

  disarm(): void {
    this.armed = null;
    this.rules = [];
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
