/**
 * A TCP front for the S3 server that cuts one connection mid-transfer when armed: once armed, the
 * connection that next carries `bytes` more in the given direction (up: client to server, a
 * request body; down: server to client, a response body) is destroyed, as a reset or a dropped
 * peer would end it. What a client then does (fail, retry, store a truncated object) is what
 * bench/s3/run.ts's fault probe records.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export class CutProxy {
  private server: Server | null = null;
  private armed: { direction: 'up' | 'down'; bytes: number } | null = null;
  private readonly sockets = new Set<Socket>();
  cuts = 0;

  constructor(private readonly target: URL) {}

  async start(): Promise<string> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      this.sockets.add(client).add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      const relay = (from: Socket, to: Socket, direction: 'up' | 'down') => {
        from.on('data', (chunk: Buffer) => {
          const a = this.armed;
          if (a && a.direction === direction) {
            a.bytes -= chunk.length;
            if (a.bytes <= 0) {
              this.armed = null;
              this.cuts++;
              client.resetAndDestroy();
              upstream.destroy();
              return;
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
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address() as { port: number };
    return `http://127.0.0.1:${address.port}`;
  }

  /** The next connection to pass `bytes` more in `direction` is cut. */
  arm(direction: 'up' | 'down', bytes: number): void {
    this.armed = { direction, bytes };
  }

  disarm(): void {
    this.armed = null;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
