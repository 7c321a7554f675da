// `sable serve` as a child process on a fresh data directory and a free port, for benchmarks that
// measure the service as users run it (its memory is the child's, apart from the load generator).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_NODE_FLAGS } from '../control-plane/node-flags.js';
import { paths } from './ann/paths.js';

export interface Served {
  child: ChildProcess;
  url: string;
  key: string;
  dir: string;
  stop(): Promise<void>;
}

export async function serve(prefix: string, flags: string[] = []): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const cli = join(paths.root, 'dist', 'control-plane', 'cli.js');
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, cli, 'serve', '--port', '0', '--data-dir', dir, ...flags], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const m = /sable listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`sable serve exited with ${code}`)));
  });
  return {
    child,
    url,
    dir,
    key: readFileSync(join(dir, 'admin.key'), 'utf8').trim(),
    async stop() {
      child.kill('SIGTERM');
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
