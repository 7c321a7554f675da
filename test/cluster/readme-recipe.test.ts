// The README's three-node recipe ("A three-node cluster on one machine"), run as pasted from the
// repository's root in one bash session (`set -euo pipefail`): Debian's PostgreSQL under runuser,
// the S3 test server, three `npx sable serve` on 127.0.0.2-4, a dataset made, written and searched
// through three different nodes, then everything stopped. The block's own last search must print
// the ids its comment promises.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');
const HEADING = '### A three-node cluster on one machine';
const WORK = '/tmp/sable-cluster';

function recipe(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf(HEADING);
  expect(from, `README.md has no "${HEADING}" section`).toBeGreaterThan(0);
  const m = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(from));
  return m![1]!;
}

let pid = 0;

afterAll(() => {
  // Whatever the block left running when it failed midway.
  if (pid) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  const pgctl = join(execFileSync('bash', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1']).toString().trim(), 'pg_ctl');
  if (existsSync(join(WORK, 'pg', 'postmaster.pid'))) {
    try {
      execFileSync('runuser', ['-u', 'postgres', '--', pgctl, '-D', join(WORK, 'pg'), '-m', 'immediate', 'stop'], { stdio: 'ignore' });
    } catch {
      // not running
    }
  }
  rmSync(WORK, { recursive: true, force: true });
});

it('the README cluster recipe runs as pasted and its search answers 1 3 through the third node', async () => {
  const code = recipe();
  expect(code).toContain('npx sable serve --host 127.0.0.$i');
  rmSync(WORK, { recursive: true, force: true });
  const bash = spawn('bash', ['-c', `set -euo pipefail\n${code}`], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SABLE_DATA_DIR: '' } });
  pid = bash.pid!;
  let stdout = '';
  let stderr = '';
  bash.stdout.on('data', (c: Buffer) => (stdout += String(c)));
  bash.stderr.on('data', (c: Buffer) => (stderr += String(c)));
  const exit = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      process.kill(-pid, 'SIGKILL');
      resolve(-1);
    }, 90_000);
    bash.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  const logs = ['node2', 'node3', 'node4'].map((n) => (existsSync(join(WORK, `${n}.log`)) ? readFileSync(join(WORK, `${n}.log`), 'utf8').slice(-2000) : '')).join('\n');
  expect(exit, `stdout:\n${stdout}\nstderr:\n${stderr}\nnode logs:\n${logs}`).toBe(0);
  expect(stdout.trim().split('\n').at(-1)).toBe('1 3');
}, 120_000);
