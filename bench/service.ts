// `sable serve` as a child process on a fresh data directory and a free port, for benchmarks that
// measure the service as users run it (its memory is the child's, apart from the load generator).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_NODE_FLAGS } from '../control-plane/node-flags.js';
import { paths } from './ann/paths.js';

export interface Served {
  child: ChildProcess;
  url: string;
  /** The admin key the first start wrote ('' when this process did not write one: a cluster's later nodes). */
  key: string;
  dir: string;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** Stops the process (SIGTERM, or SIGKILL for a crash) and removes its data directory. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * `sable serve` on a fresh data directory: a free port unless `flags` name one; `env` added to
 * this process's. SABLE_BENCH_NODE_ARGS adds Node flags to the service (say "--cpu-prof
 * --cpu-prof-dir=DIR" to profile it; Node refuses those in NODE_OPTIONS).
 */
export async function serve(prefix: string, flags: string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const cli = join(paths.root, 'dist', 'control-plane', 'cli.js');
  const port = flags.includes('--port') ? [] : ['--port', '0'];
  const extra = (process.env.SABLE_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...extra, cli, 'serve', ...port, '--data-dir', dir, ...flags], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const m = /sable listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`sable serve exited with ${code}`)));
  });
  const keyFile = join(dir, 'admin.key');
  return {
    child,
    url,
    dir,
    exited,
    key: existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '',
    async stop(signal = 'SIGTERM') {
      child.kill(signal);
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A JSON caller of a served service: the parsed answer, or an error naming the call. */
export function callerOf(s: Served) {
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(s.url + path, { method, headers: { 'x-api-key': s.key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const out = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
    return out;
  };
}
