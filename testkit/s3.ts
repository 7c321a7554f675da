// Starts the local S3-compatible server (peers/s3-server.mjs) in a child process, for a test or a
// benchmark. The server is found from the repository root, so this runs the same from the
// TypeScript source (the tests) and from dist/testkit/ (the benchmarks).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function serverScript(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const script = join(dir, 'testkit', 'peers', 's3-server.mjs');
    if (existsSync(script)) return script;
    if (dirname(dir) === dir) throw new Error('testkit/peers/s3-server.mjs was not found above this file');
  }
}

export const S3_KEY = 'S3RVER'; // s3rver's built-in account
export const S3_SECRET = 'S3RVER';

export interface LocalS3 {
  endpoint: string;
  directory: string;
  stop(): Promise<void>;
}

export async function startS3(...buckets: string[]): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'sable-s3-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', serverScript(), directory, ...buckets], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const m = /(http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`the local S3 server exited with ${code}`)));
  });
  return {
    endpoint,
    directory,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
