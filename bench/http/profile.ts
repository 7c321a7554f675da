// Reads V8 CPU profiles (--cpu-prof) of the service process and sums the self time of each
// sample inside the measuring window by where the code lives (service module, dependency, V8
// builtin, GC, idle). Profile timestamps are µs of the monotonic clock, as process.hrtime.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** 'main' or 'worker' (every worker thread summed). */
  thread: string;
  files: number;
  /** ms of samples in the window, and of those not idle. */
  windowMs: number;
  busyMs: number;
  /** ms by category, busiest first. */
  categories: { name: string; ms: number }[];
  /** ms by function (self time), busiest first. */
  functions: { name: string; ms: number }[];
}

export function category(f: CallFrame): string {
  const { functionName: fn, url } = f;
  if (fn === '(idle)') return 'idle';
  // A piscina worker waiting for its next task blocks in Atomics.wait: off the CPU.
  if (fn === 'atomicsWaitLoop') return 'idle';
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)') return 'native, not attributed to JS (event loop, uWS C++, syscalls)';
  if (fn === '(root)') return 'root';
  if (!url) {
    if (fn === 'parse') return 'JSON.parse';
    if (fn === 'stringify') return 'JSON.stringify';
    return `native/builtin: ${fn || '(anonymous)'}`;
  }
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return `dependency: ${url.slice(nm + 14).split('/')[0]}`;
  if (url.startsWith('node:')) return `node: ${url.slice(5)}`;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return `sable: ${url.slice(dist + 6).replace(/\.js$/, '')}`;
  return basename(url);
}

function label(f: CallFrame): string {
  const where = f.url ? `${basename(f.url)}:${f.lineNumber + 1}` : 'native';
  return `${f.functionName || '(anonymous)'} (${where})`;
}

/** Sums the profiles of `dir` (main thread: file names with thread id 0; workers: the rest). */
export function summarise(dir: string, fromUs: number, toUs: number): ProfileSummary[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const groups = new Map<string, string[]>();
  for (const f of files) {
    // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile
    const thread = f.split('.')[4] === '0' ? 'main' : 'worker';
    groups.set(thread, [...(groups.get(thread) ?? []), f]);
  }
  const out: ProfileSummary[] = [];
  for (const [thread, list] of groups) {
    const cats = new Map<string, number>();
    const fns = new Map<string, number>();
    let windowUs = 0;
    let idleUs = 0;
    for (const f of list) {
      const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile;
      const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
      let t = p.startTime;
      for (let i = 0; i < p.samples.length; i++) {
        t += p.timeDeltas[i]!;
        // A sample's time is the gap to the next one.
        const dt = (p.timeDeltas[i + 1] ?? 0);
        if (t < fromUs || t > toUs || dt <= 0) continue;
        const cf = byId.get(p.samples[i]!)!;
        const c = category(cf);
        windowUs += dt;
        if (c === 'idle') {
          idleUs += dt;
          continue;
        }
        cats.set(c, (cats.get(c) ?? 0) + dt);
        const l = label(cf);
        fns.set(l, (fns.get(l) ?? 0) + dt);
      }
    }
    const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000 }));
    out.push({ thread, files: list.length, windowMs: windowUs / 1000, busyMs: (windowUs - idleUs) / 1000, categories: sorted(cats), functions: sorted(fns) });
  }
  return out.sort((a, b) => (a.thread === 'main' ? -1 : b.thread === 'main' ? 1 : 0));
}
