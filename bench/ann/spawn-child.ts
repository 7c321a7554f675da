// One (library, set, build) measured in a child process of its own (child.ts), so memory figures
// are per library and timings do not overlap; bench:ann and bench:ann:matrix both run them.
import { spawn } from 'node:child_process';
import { paths } from './paths.js';
import { emptyLibRun, type ChildTask, type LibRun } from './libs/types.js';

/** The child's result line, or a run that says why there is none (killed past `timeoutMs`, exited). */
export function runChild(task: ChildTask, timeoutMs: number): Promise<LibRun> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=8192', paths.child, JSON.stringify(task)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (line) return resolve(JSON.parse(line.slice(7)) as LibRun);
      resolve({ ...emptyLibRun(task), error: signal ? `killed (${signal}${signal === 'SIGKILL' ? `, over ${timeoutMs / 1000} s?` : ''})` : `exited with ${code} without a result` });
    });
  });
}
