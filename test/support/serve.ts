// `sable serve` as a child process on a free port: the one launcher of the suites that stop it
// (SIGTERM) or kill it (SIGKILL) and start it again on the same data directory, that search all it
// wrote (isolation), or that run it behind a loopback fence (fuzz).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

const cli = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');

export interface ServeOptions {
  /** `serve`'s arguments instead of `--port 0 --data-dir <dir>`. */
  args?: string[];
  /** Node's own flags (a module preloaded with --import). */
  nodeArgs?: string[];
  /** Keep only the last this many characters of stderr (a long run's output). */
  stderrTail?: number;
}

export interface Served {
  child: ChildProcess;
  pid: number;
  url: string;
  /** Set once the process has exited: its code or signal. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Everything written so far on stdout; stderr whole, or its tail. */
  stdout(): string;
  stderr(): string;
  /** Lines of stderr that start with `prefix`, all of them since the start. */
  linesStartingWith(prefix: string): string[];
  /** Resident memory of the service now, bytes (VmRSS), or null once it is gone. */
  rss(): number | null;
  /** Stops the child with `signal` (unless it has exited) and waits for the exit. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

export function serve(dir: string | null, env: Record<string, string> = {}, o: ServeOptions = {}): Promise<Served> {
  const args = o.args ?? ['--port', '0', '--data-dir', dir!];
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), cli, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const out: Buffer[] = [];
  let err = '';
  const kept: string[] = [];
  let partial = '';
  child.stdout!.on('data', (c: Buffer) => out.push(c));
  child.stderr!.on('data', (c: Buffer) => {
    const text = String(c);
    err = o.stderrTail ? (err + text).slice(-o.stderrTail) : err + text;
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    kept.push(...lines.filter((l) => l.startsWith('sable')));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stdout = () => Buffer.concat(out).toString('utf8');
  const svc: Served = {
    child,
    pid: child.pid!,
    url: '',
    exit: null,
    stdout,
    stderr: () => err,
    linesStartingWith: (prefix) => kept.filter((l) => l.startsWith(prefix)),
    rss: () => {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        return m ? Number(m[1]) * 1024 : null;
      } catch {
        return null;
      }
    },
    async stop(signal = 'SIGTERM') {
      if (!svc.exit) child.kill(signal);
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    child.on('exit', (code, signal) => {
      svc.exit = { code, signal };
      reject(new Error(`sable serve exited with ${code ?? signal} before listening: ${stdout()}\n${err}`));
    });
    const onData = () => {
      const m = /sable listening on (\S+)/.exec(stdout());
      if (!m) return;
      child.stdout!.off('data', onData);
      svc.url = m[1]!;
      resolve(svc);
    };
    child.stdout!.on('data', onData);
  });
}

/** The admin key the first start wrote. */
export function adminKey(dir: string): string {
  return readFileSync(join(dir, 'admin.key'), 'utf8').trim();
}

/** Calls through `call` that must succeed (status < 300): resolves with the parsed body. */
export function succeeding(call: ReturnType<typeof client>) {
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await call(method, path, body);
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return r.body;
  };
}

/** A JSON client for one service and key: resolves with the status and the parsed body. */
export function client(url: () => string, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(url() + path, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}
