// CPU accounting from /proc (Linux): per-thread CPU of a process and the machine's busy time,
// so a run can say where its CPU went and how much the rest of the machine used meanwhile.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export let clkTck = 100;
try {
  clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // the usual value
}

export interface ThreadTimes {
  /** tid -> name, seconds of CPU, of which in the kernel */
  threads: Map<number, { name: string; seconds: number; sys: number }>;
}

/** CPU seconds per thread of `pid` (empty when /proc is not there or the process is gone). */
export function threadTimes(pid: number): ThreadTimes {
  const threads = new Map<number, { name: string; seconds: number; sys: number }>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return { threads };
  }
  for (const t of tids) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const open = s.indexOf('(');
      const close = s.lastIndexOf(')');
      const f = s.slice(close + 2).split(' ');
      // fields 14 and 15 of stat (utime, stime) are 11 and 12 after the ')'.
      const seconds = (Number(f[11]) + Number(f[12])) / clkTck;
      const tid = Number(t);
      threads.set(tid, { name: tid === pid ? 'main' : s.slice(open + 1, close), seconds, sys: Number(f[12]) / clkTck });
    } catch {
      // the thread ended
    }
  }
  return { threads };
}

/**
 * CPU seconds per thread between two snapshots: 'main', then the `workers` busiest other threads
 * summed as 'workers' (Node names every thread "node", so a search pool's threads are found as the
 * busiest non-main ones), the rest as 'other threads' (GC helpers, libuv, LMDB).
 */
export function threadDelta(pid: number, a: ThreadTimes, b: ThreadTimes, workers: number): { total: Record<string, number>; sys: Record<string, number> } {
  let main = { cpu: 0, sys: 0 };
  const rest: { cpu: number; sys: number }[] = [];
  for (const [tid, t] of b.threads) {
    const before = a.threads.get(tid);
    const d = { cpu: t.seconds - (before?.seconds ?? 0), sys: t.sys - (before?.sys ?? 0) };
    if (tid === pid) main = d;
    else if (d.cpu > 0) rest.push(d);
  }
  rest.sort((x, y) => y.cpu - x.cpu);
  const sum = (l: { cpu: number; sys: number }[], k: 'cpu' | 'sys') => l.reduce((s, x) => s + x[k], 0);
  const total: Record<string, number> = { main: main.cpu };
  const sys: Record<string, number> = { main: main.sys };
  if (workers > 0) {
    total.workers = sum(rest.slice(0, workers), 'cpu');
    sys.workers = sum(rest.slice(0, workers), 'sys');
  }
  total['other threads'] = sum(rest.slice(workers), 'cpu');
  sys['other threads'] = sum(rest.slice(workers), 'sys');
  return { total, sys };
}

export interface MachineTimes {
  busy: number;
  total: number;
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
export function machineTimes(): MachineTimes {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const total = v.slice(0, 8).reduce((s, x) => s + x, 0);
    return { busy: (total - idle) / clkTck, total: total / clkTck };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

export function loadAverage(): number[] {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  } catch {
    return [NaN, NaN, NaN];
  }
}
