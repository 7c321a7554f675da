// The native engine in worker threads that are terminated while its async work is in flight, as
// piscina terminates them when a pool closes: the work's promises settle in an environment that
// cannot take a JS exception, and the process must go on (it used to abort: "terminate called
// after throwing an instance of 'Napi::Error'", which once ended a CI run).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

it('terminating a worker thread with native work in flight does not end the process', async () => {
  const child = join(__dirname, '..', 'support', 'worker-exit-child.mjs');
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [child, '4'], { timeout: 90_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
  expect(out.stderr).not.toContain('terminate called');
  expect(out.code).toBe(0);
  expect(out.stdout.trim()).toBe('ok');
}, 120_000);
