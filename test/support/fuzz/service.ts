// `sable serve` for the fuzz test: a child process (a crash must not take the test down with it)
// whose stderr is kept (500s log their stack there), whose outbound connections are fenced to
// loopback (loopback-only.mjs), and whose every upstream default points at a closed local port.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const cli = join(__dirname, '..', '..', '..', 'dist', 'control-plane', 'cli.js');
const fence = join(__dirname, 'loopback-only.mjs');

/** Port 9 (discard) is closed here: calls to an upstream fail at once, as a real outage would. */
const NOWHERE = 'http://127.0.0.1:9';

const UPSTREAMS: Record<string, string> = {
  SABLE_OPENAI_URL: `${NOWHERE}/v1`,
  SABLE_COHERE_URL: NOWHERE,
  SABLE_EMBEDDINGS_COMPATIBLE_URL: `${NOWHERE}/v1`,
  SABLE_GCS_API_URL: NOWHERE,
  SABLE_GDRIVE_API_URL: `${NOWHERE}/`,
  SABLE_ATLASSIAN_API_URL: NOWHERE,
  SABLE_GITHUB_API_URL: NOWHERE,
  // Connections can be created (a consent URL is only a string); their token calls fail.
  SABLE_GOOGLE_CLIENT_ID: 'fuzz-google',
  SABLE_GOOGLE_CLIENT_SECRET: 'fuzz-google-secret',
  SABLE_GOOGLE_AUTHORIZE_URL: `${NOWHERE}/authorize`,
  SABLE_GOOGLE_TOKEN_URL: `${NOWHERE}/token`,
  SABLE_GOOGLE_USERINFO_URL: `${NOWHERE}/userinfo`,
  SABLE_GOOGLE_REVOKE_URL: `${NOWHERE}/revoke`,
  SABLE_ATLASSIAN_CLIENT_ID: 'fuzz-atlassian',
  SABLE_ATLASSIAN_CLIENT_SECRET: 'fuzz-atlassian-secret',
  SABLE_ATLASSIAN_AUTHORIZE_URL: `${NOWHERE}/authorize`,
  SABLE_ATLASSIAN_TOKEN_URL: `${NOWHERE}/token`,
  SABLE_ATLASSIAN_USERINFO_URL: `${NOWHERE}/me`,
  SABLE_EMBEDDINGS_RETRIES: '0',
  SABLE_EMBEDDINGS_TIMEOUT_MS: '5000',
};

export interface FuzzedService {
  child: ChildProcess;
  pid: number;
  url: string;
  dir: string;
  /** Set once the process has exited: its code or signal. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** The last 256 KiB of stderr. */
  stderr(): string;
  /** Lines of stderr that start with `prefix`, all of them since the start. */
  linesStartingWith(prefix: string): string[];
  /** Resident memory of the service now, bytes (VmRSS), or null once it is gone. */
  rss(): number | null;
  stop(): Promise<void>;
}

export function startFuzzedService(dir: string, env: Record<string, string> = {}): Promise<FuzzedService> {
  const child = spawn(process.execPath, ['--import', fence, cli, 'serve', '--port', '0', '--data-dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...UPSTREAMS, ...env },
  });
  let err = '';
  const kept: string[] = [];
  let partial = '';
  child.stderr!.on('data', (c: Buffer) => {
    const text = String(c);
    err = (err + text).slice(-256 * 1024);
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    for (const l of lines) if (l.startsWith('sable')) kept.push(l);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    const svc: FuzzedService = {
      child,
      pid: child.pid!,
      url: '',
      dir,
      exit: null,
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
      async stop() {
        if (!svc.exit) child.kill('SIGTERM');
        await exited;
      },
    };
    child.on('exit', (code, signal) => {
      svc.exit = { code, signal };
      reject(new Error(`sable serve exited with ${code ?? signal} before listening: ${out}\n${err}`));
    });
    child.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const m = /sable listening on (\S+)/.exec(out);
      if (m && !svc.url) {
        svc.url = m[1];
        resolve(svc);
      }
    });
  });
}

export function adminKeyOf(dir: string): string {
  return readFileSync(join(dir, 'admin.key'), 'utf8').trim();
}
