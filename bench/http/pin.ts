// CPU affinity of a process and all its threads (util-linux taskset), for the one-core-each runs.
import { spawnSync } from 'node:child_process';

/** Why pinning cannot work here, or null. */
export function pinUnusable(): string | null {
  const r = spawnSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' });
  return r.error || r.status !== 0 ? 'taskset (util-linux) is not available' : null;
}

/** Pins every thread of `pid` to `cpus` (a taskset list: "0", "1", "0-1"); threads it starts later inherit it. */
export function pin(pid: number, cpus: string): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset -a -p -c ${cpus} ${pid} failed: ${r.stderr}`);
}
