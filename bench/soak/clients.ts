// The closed-loop clients: each holds one keep-alive HTTP/1.1 connection (bench/http's raw
// node:net client) and sends its next request when the previous answer is complete, the
// operation drawn from the mix with its own seeded generator. A request counts in the bucket in
// which it was answered; a socket error counts as an error and the client reconnects.
import { Rng } from '../../testkit/rng.js';
import { openConns, type Conn } from '../http/client.js';
import type { OpMaker } from './ops.js';
import type { Recorder } from './series.js';

export interface ClientRun {
  requests: number;
  reconnects: number;
  /** The first message seen for each error kind. */
  examples: Record<string, string>;
}

interface Answer {
  err: (Error & { code?: string }) | null;
  status: number;
  body: Buffer | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runClients(o: {
  maker: OpMaker;
  host: string;
  port: number;
  clients: number;
  seed: number;
  /** performance.now() of the soak's start, and its length. */
  t0: number;
  durationMs: number;
  recorder: Recorder;
  /** True once the service is gone: clients stop instead of reconnecting forever. */
  serviceGone: () => boolean;
}): Promise<ClientRun> {
  const run: ClientRun = { requests: 0, reconnects: 0, examples: {} };
  const end = o.t0 + o.durationMs;
  const open = async (): Promise<Conn> => (await openConns('net', o.host, o.port, 1)).conns[0]!;
  const client = async (slot: number, first: Conn) => {
    const rng = new Rng(o.seed * 7919 + slot);
    let conn: Conn | null = first;
    while (performance.now() < end && !o.serviceGone()) {
      if (!conn) {
        try {
          conn = await open();
          run.reconnects++;
        } catch {
          await sleep(200);
          continue;
        }
      }
      const kind = o.maker.pick(rng);
      const op = o.maker.make(kind, rng);
      const start = performance.now();
      const a = await new Promise<Answer>((resolve) => conn!.send(op.req, op.wantBody, (err, status, body) => resolve({ err, status, body })));
      const done = performance.now();
      run.requests++;
      const bucket = o.recorder.bucketOf(done - o.t0);
      let problem: string | null = null;
      let detail = '';
      if (a.err) {
        problem = a.err.code ?? a.err.message;
        detail = a.err.message;
        conn.close();
        conn = null;
      } else if (a.status < 200 || a.status >= 300) {
        const text = a.body?.toString('utf8') ?? '';
        let code = '';
        try {
          code = (JSON.parse(text) as { error?: string }).error ?? '';
        } catch {
          // not JSON
        }
        problem = `${a.status}${code ? ` ${code}` : ''}`;
        detail = text.slice(0, 300);
      } else if (op.check && a.body) {
        try {
          problem = op.check(a.body);
        } catch (e) {
          problem = `unreadable answer: ${(e as Error).message}`;
        }
        if (problem) detail = a.body.toString('utf8').slice(0, 300);
      }
      if (problem) {
        const key = `${problem} (${op.route})`;
        o.recorder.error(bucket, kind, key);
        run.examples[key] ??= detail;
      } else {
        o.recorder.ok(bucket, kind, done - start);
      }
    }
    conn?.close();
  };
  const { conns } = await openConns('net', o.host, o.port, o.clients);
  await Promise.all(conns.map((c, i) => client(i, c)));
  return run;
}
