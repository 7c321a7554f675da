// `sable serve` as a child process on a free port, for tests that stop it (SIGTERM) or kill it
// (SIGKILL) and start it again on the same data directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

const cli = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');

export interface Served {
  child: ChildProcess;
  url: string;
  /** What the child printed on stderr so far (the adapter line among it). */
  stderr(): string;
  /** Stops the child with `signal` and waits for it to exit. */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

export function serve(dir: string, env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (signal: 'SIGTERM' | 'SIGKILL') => {
    child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const m = /sable listening on (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1], stop, stderr: () => err });
    });
    child.stderr!.on('data', (c: Buffer) => (err += String(c)));
    child.on('exit', (code) => reject(new Error(`sable serve exited with ${code}: ${out}${err}`)));
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
