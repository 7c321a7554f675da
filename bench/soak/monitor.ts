// The service process seen from /proc (Linux), sampled on a timer: resident memory (VmRSS), its
// CPU (every thread, from /proc/<pid>/stat), the machine's busy cores (bench/http/procstat.ts)
// and the load generator's own CPU, so a latency step can be told from another process's load.
import { readFileSync } from 'node:fs';
import { clkTck, machineTimes } from '../http/procstat.js';

export interface Sample {
  /** Seconds since the soak started. */
  t: number;
  rssMB: number;
  /** RSS split: anonymous memory (JS heap, native allocations) and mapped files (LMDB, snapshots). */
  anonMB: number;
  fileMB: number;
  /** Cores, averaged since the previous sample. */
  serviceCores: number;
  machineCores: number;
  clientCores: number;
}

type StatusField = 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile';

/** Fields of /proc/<pid>/status in MB (NaN when the process is gone). */
export function statusFields<F extends StatusField>(pid: number, fields: F[]): Record<F, number> {
  const out = {} as Record<F, number>;
  let text = '';
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // gone: NaN below
  }
  for (const f of fields) {
    const m = new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(text);
    out[f] = m ? Number(m[1]) / 1024 : NaN;
  }
  return out;
}

export function statusField(pid: number, field: StatusField): number {
  return statusFields(pid, [field])[field];
}

/** CPU seconds of the whole process (utime + stime; threads that ended included). */
function processCpu(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / clkTck;
  } catch {
    return NaN;
  }
}

export class Monitor {
  readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private last: { at: number; cpu: number; busy: number; own: number } | null = null;
  private t0 = 0;

  constructor(
    private readonly pid: number,
    private readonly everyMs: number,
  ) {}

  start(t0: number): void {
    this.t0 = t0;
    this.last = this.read();
    this.timer = setInterval(() => this.sample(), this.everyMs);
  }

  private read() {
    const own = process.cpuUsage();
    return { at: performance.now(), cpu: processCpu(this.pid), busy: machineTimes().busy, own: (own.user + own.system) / 1e6 };
  }

  sample(): Sample | undefined {
    if (!this.last) return undefined;
    const now = this.read();
    const dt = (now.at - this.last.at) / 1000;
    if (dt <= 0) return undefined;
    const mem = statusFields(this.pid, ['VmRSS', 'RssAnon', 'RssFile']);
    const s: Sample = {
      t: (now.at - this.t0) / 1000,
      rssMB: mem.VmRSS,
      anonMB: mem.RssAnon,
      fileMB: mem.RssFile,
      serviceCores: (now.cpu - this.last.cpu) / dt,
      machineCores: (now.busy - this.last.busy) / dt,
      clientCores: (now.own - this.last.own) / dt,
    };
    this.last = now;
    this.samples.push(s);
    return s;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
  }
}
