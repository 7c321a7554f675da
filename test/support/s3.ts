// Starts the local S3-compatible server (s3-server.mjs) in a child process for a test.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const S3_KEY = 'S3RVER'; // s3rver's built-in account
export const S3_SECRET = 'S3RVER';

export interface LocalS3 {
  endpoint: string;
  directory: string;
  stop(): Promise<void>;
}

export async function startS3(...buckets: string[]): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'sable-s3-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', join(__dirname, 's3-server.mjs'), directory, ...buckets], { stdio: ['ignore', 'pipe', 'inherit'] });
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
