// A real PostgreSQL server for a test: its own cluster (initdb) in a temporary directory, on a free
// loopback port, started and stopped with pg_ctl. PostgreSQL refuses to run as root, so when the
// test runs as root (CI does) every server command runs as the `postgres` user through runuser.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { freePort } from './ports.js';

export interface LocalPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication, no password). */
  url: string;
  port: number;
  /** The data directory, also the directory of the server's Unix socket and of its log. */
  dir: string;
  /** Stops the server at once (pg_ctl stop -m immediate) and removes the directory. */
  stop(): Promise<void>;
}

export interface PostgresOptions {
  /** A bound on initdb and on each start attempt (default 60 s). */
  timeoutMs?: number;
  /** Extra server settings (`-c name=value`), over the defaults (fsync, synchronous_commit and full_page_writes off). */
  settings?: Record<string, string>;
  /**
   * A streaming standby of this server instead of a new cluster: its data directory is a base
   * backup of the primary's (pg_basebackup -R), and it follows the primary's WAL from then on.
   */
  standbyOf?: LocalPostgres;
}

const START_ATTEMPTS = 5;

/** The directory of Debian's newest initdb and pg_ctl, else the one of `initdb` on PATH. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+(\.\d+)?$/.test(v) && existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length > 0) return join(root, versions[0], 'bin');
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  throw new Error('no PostgreSQL server binaries: neither /usr/lib/postgresql/*/bin/initdb nor initdb on PATH (apt-get install postgresql)');
}

export async function startPostgres(opts: PostgresOptions = {}): Promise<LocalPostgres> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'sable-pg-'));
  if (asRoot) {
    const [uid, gid] = postgresUser();
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[], ms: number) => runTool(asRoot, join(bin, tool), args, dir, ms);
  try {
    if (opts.standbyOf) {
      await run('pg_basebackup', ['-D', dir, '-h', '127.0.0.1', '-p', String(opts.standbyOf.port), '-U', 'postgres', '-R', '-X', 'stream', '--no-sync'], timeoutMs);
    } else {
      await run('initdb', ['-D', dir, '-A', 'trust', '--no-sync', '-U', 'postgres', '-E', 'UTF8', '--locale=C'], timeoutMs);
    }
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      ...opts.settings,
    };
    const log = join(dir, 'server.log');
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const options = [`-p ${port}`, `-k ${dir}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
      const seconds = Math.max(1, Math.floor(timeoutMs / 1000));
      const logFrom = readLog(log).length;
      try {
        await run('pg_ctl', ['start', '-w', '-t', String(seconds), '-D', dir, '-l', log, '-o', options], timeoutMs + 5_000);
      } catch (err) {
        const text = readLog(log).slice(logFrom);
        // Another process took the port between our probe and the server's bind: try another.
        if (attempt < START_ATTEMPTS && /could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(text)) continue;
        throw new Error(`${(err as Error).message}\n--- server log ---\n${text.slice(-3000)}`);
      }
      const stopOnExit = () => stopSync(asRoot, bin, dir);
      process.once('exit', stopOnExit);
      let stopped: Promise<void> | undefined;
      return {
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        port,
        dir,
        stop() {
          stopped ??= (async () => {
            process.off('exit', stopOnExit);
            try {
              await run('pg_ctl', ['stop', '-m', 'immediate', '-w', '-D', dir], 30_000);
            } finally {
              rmSync(dir, { recursive: true, force: true });
            }
          })();
          return stopped;
        },
      };
    }
  } catch (err) {
    stopSync(asRoot, bin, dir); // a server that started too late must not outlive its directory
    throw err;
  }
}

function postgresUser(): [number, number] {
  try {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
    return [uid, gid];
  } catch {
    throw new Error('running as root but there is no `postgres` user to run the server as (apt-get install postgresql creates it)');
  }
}

/** Runs a server tool, as `postgres` when we are root, with a hard timeout (the child is killed). */
function runTool(asRoot: boolean, tool: string, args: string[], cwd: string, timeoutMs: number): Promise<void> {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', tool, ...args]] : [tool, args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { cwd, timeout: timeoutMs, killSignal: 'SIGKILL', env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (!err) return resolve();
      const why = err.killed ? `was killed after ${timeoutMs} ms` : `failed (${err.code ?? err.signal})`;
      reject(new Error(`${basename(tool)} ${args[0]} ${why}: ${String(stderr).trim() || String(stdout).trim()}`));
    });
  });
}

function stopSync(asRoot: boolean, bin: string, dir: string): void {
  const tool = join(bin, 'pg_ctl');
  const args = ['stop', '-m', 'immediate', '-w', '-D', dir];
  try {
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', tool, ...args], { cwd: dir, timeout: 15_000, stdio: 'ignore' });
    else execFileSync(tool, args, { cwd: dir, timeout: 15_000, stdio: 'ignore' });
  } catch {
    // Already stopped: nothing to do.
  }
  rmSync(dir, { recursive: true, force: true });
}

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

