// `sable serve` as a child process with everything it writes kept (stdout and stderr, whole),
// and an HTTP client that keeps every answer it gets (status, headers, body), so a test can
// search all the service said for what it must never say.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const cli = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');

export interface RecordedService {
  child: ChildProcess;
  url: string;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then waits for the exit (the output is complete after it). */
  stop(): Promise<void>;
}

export function serveRecorded(args: string[], env: Record<string, string>): Promise<RecordedService> {
  const child = spawn(process.execPath, [cli, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (c: Buffer) => out.push(c));
  child.stderr!.on('data', (c: Buffer) => err.push(c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stdout = () => Buffer.concat(out).toString('utf8');
  const stderr = () => Buffer.concat(err).toString('utf8');
  return new Promise((resolve, reject) => {
    const onData = () => {
      const m = /sable listening on (\S+)/.exec(stdout());
      if (!m) return;
      child.stdout!.off('data', onData);
      resolve({
        child,
        url: m[1],
        stdout,
        stderr,
        async stop() {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`sable serve exited with ${code}: ${stdout()} ${stderr()}`)));
  });
}

export interface Exchange {
  method: string;
  url: string;
  status: number;
  headers: string;
  body: string;
  /** Secrets this answer exists to hand out (the token of POST /auth/sessions). */
  issues: string[];
}

export interface CallOptions {
  key?: string;
  bearer?: string;
  body?: unknown;
  /** A body sent as is (multipart, raw bytes, broken JSON). */
  raw?: BodyInit;
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
  /** Its entry in the transcript. */
  exchange: Exchange;
}

/** Calls that keep their answers in `transcript`. */
export function recorder(base: () => string) {
  const transcript: Exchange[] = [];
  const call = async (method: string, path: string, o: CallOptions = {}): Promise<Answer> => {
    const url = path.startsWith('http') ? path : base() + path;
    const headers: Record<string, string> = { ...(o.key ? { 'x-api-key': o.key } : {}), ...(o.bearer ? { authorization: `Bearer ${o.bearer}` } : {}), ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers };
    const res = await fetch(url, { method, headers, redirect: 'manual', body: o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body)) });
    const text = await res.text();
    const exchange: Exchange = { method, url, status: res.status, headers: [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n'), body: text, issues: [] };
    transcript.push(exchange);
    let body: any = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body, exchange };
  };
  return { call, transcript };
}
