// On-CPU profile of the service with Linux `perf`: samples only while a thread runs (V8's
// --cpu-prof samples on a wall clock, so a thread waiting for a core is charged to where it
// waited). Each sample's call chain is read from the leaf up and charged to the first step of the
// request it is inside (body read, parse, auth, validation, search call, ...); samples inside no
// step go by the library they are in. The service runs with --perf-basic-prof (JIT symbols) and
// --interpreted-frames-native-stack (names of interpreted frames).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

export const PERF_NODE_FLAGS = ['--perf-basic-prof', '--interpreted-frames-native-stack'];

/** Why perf cannot profile here, or null when it can. */
export function perfUnusable(): string | null {
  const v = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  if (v.error || v.status !== 0) return 'the perf tool is not installed (Debian: linux-perf)';
  try {
    const paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
    if (paranoid > 2) return `kernel.perf_event_paranoid is ${paranoid} (2 or less lets a user profile their own processes)`;
  } catch {
    return 'no /proc/sys/kernel/perf_event_paranoid';
  }
  return null;
}

export class PerfRecording {
  private constructor(
    private readonly proc: ChildProcess,
    readonly file: string,
  ) {}

  /** Starts sampling every thread of `pid` (999 Hz per thread, call chains by frame pointers). */
  static start(pid: number, file: string): PerfRecording {
    const proc = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    proc.stderr!.resume();
    return new PerfRecording(proc, file);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.proc.exitCode !== null) return resolve();
      this.proc.once('exit', () => resolve());
      this.proc.kill('SIGINT');
    });
  }
}

/** Steps of a request, each recognised by the functions it runs in (first match from the leaf up). */
const STEPS: [string, RegExp][] = [
  ['GC', /v8::internal::(Heap|Scavenger|ScavengerCollector|MarkCompactCollector|MinorMarkCompact|ConcurrentMarking|GCTracer)|Builtins_RecordWrite/],
  ['metrics', /\b(observeRequest|observeSearch)\b/],
  ['body read', /\breadBody\b/],
  ['parse: query vector', /\b(readDecimalVector|toFloat32)\b|read_decimal_list|from_chars/],
  ['parse: JSON', /JsonParser|Builtin_JsonParse/],
  ['parse: msgpack', /\b(decodeMsgpack|unpack|readObject|checkedRead)\b/],
  ['auth', /\b(authenticate|lookupKey|hashKey)\b/],
  ['validation', /\b(validate\d*|checkDimension|checkQuery)\b/],
  ['routing', /\b(match|find|literalsMatch|paramsOf|canonical|split)\b/],
  ['serialization', /\b(encodeMsgpack|pack|json)\b|JsonStringifier|Builtin_JsonStringify/],
  // uws.ts's respond / writeAnswer and uWS's calls; node.ts's send.
  ['write', /\b(respond|writeAnswer|cork|tryEnd|writeStatus|writeHeader|send)\b/],
  ['metadata reads', /\bhits\b/],
  ['result shaping', /\b(visibleMetadata|externalIdOf|mayHaveExternalIds)\b/],
  ['dataset lookup', /\bengineOf\b/],
  ['search call', /\b(plan|searchShardBatchAsync|flush)\b|sable::binding::/],
  ['search (native)', /sable::/],
];

export interface PerfSummary {
  /** Samples in the window per thread kind. */
  samples: { main: number; other: number };
  /** µs of CPU per request, by step, on the main thread and on the other threads. */
  steps: { step: string; mainUs: number; otherUs: number }[];
  /** The busiest leaf functions of the main thread (µs per request, self time). */
  leaves: { name: string; us: number }[];
  /** Main thread by the innermost JS function of each sample (with the native code it called). */
  js: { name: string; us: number }[];
}

/** Reads a recording and charges every sample to a step; `requests` answered during it. */
export function summarisePerf(file: string, pid: number, requests: number, keepAs?: string): PerfSummary {
  newestSymbols(`/tmp/perf-${pid}.map`);
  const out = spawnSync('perf', ['script', '-i', file, '-F', 'tid,period,ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (out.status !== 0) throw new Error(`perf script failed: ${out.stderr}`);
  // The samples as text, for reading further than the summary (bench/.cache is not committed).
  if (keepAs) writeFileSync(keepAs, out.stdout);
  return summariseSamples(out.stdout, pid, requests);
}

/** The summary of `perf script -F tid,period,ip,sym,dso` output (see summarisePerf). */
export function summariseSamples(text: string, pid: number, requests: number): PerfSummary {
  const byStep = new Map<string, { main: number; other: number }>();
  const leaves = new Map<string, number>();
  const js = new Map<string, number>();
  const samples = { main: 0, other: 0 };
  const add = (step: string, main: boolean, ns: number) => {
    const s = byStep.get(step) ?? byStep.set(step, { main: 0, other: 0 }).get(step)!;
    if (main) s.main += ns;
    else s.other += ns;
  };
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    if (lines.length < 2) continue;
    const head = /^\s*(\d+)\s+(\d+)/.exec(lines[0]!);
    if (!head) continue;
    const main = Number(head[1]) === pid;
    const ns = Number(head[2]);
    const frames = lines.slice(1).map(frameOf);
    if (main) samples.main++;
    else samples.other++;
    if (main) {
      const leaf = frames[0]!;
      leaves.set(leaf.label, (leaves.get(leaf.label) ?? 0) + ns);
      const inner = frames.find((f) => f.name !== f.sym)?.label ?? '(no JS frame: event loop, HTTP stack, GC threads)';
      js.set(inner, (js.get(inner) ?? 0) + ns);
    }
    add(stepOf(frames), main, ns);
  }
  const perRequest = (ns: number) => ns / 1000 / Math.max(1, requests);
  return {
    samples,
    steps: [...byStep]
      .map(([step, v]) => ({ step, mainUs: perRequest(v.main), otherUs: perRequest(v.other) }))
      .sort((a, b) => b.mainUs + b.otherUs - (a.mainUs + a.otherUs)),
    leaves: top(leaves, 25),
    js: top(js, 25),
  };
  function top(m: Map<string, number>, n: number) {
    return [...m].map(([name, ns]) => ({ name, us: perRequest(ns) })).sort((a, b) => b.us - a.us).slice(0, n);
  }
}

/**
 * V8 appends a line to the perf map for every code object it makes, and reuses the addresses of
 * code it collected; perf would name a sample by the first (oldest) line covering its address,
 * often start-up code long gone. Keeps, of overlapping lines, the one written last.
 */
function newestSymbols(mapFile: string): void {
  let text: string;
  try {
    text = readFileSync(mapFile, 'utf8');
  } catch {
    return;
  }
  const entries = text
    .split('\n')
    .map((line, order) => {
      const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
      return m ? { start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), line, order } : null;
    })
    .filter((e) => e !== null)
    .sort((a, b) => a.start - b.start || b.order - a.order);
  const kept: typeof entries = [];
  for (const e of entries) {
    const last = kept[kept.length - 1];
    if (last && e.start < last.end) {
      if (e.order > last.order) kept[kept.length - 1] = e;
      continue;
    }
    kept.push(e);
  }
  writeFileSync(mapFile, kept.map((e) => e.line).join('\n') + '\n');
}

interface Frame {
  /** The JS function's name (JIT frames) or the C++ symbol. */
  name: string;
  sym: string;
  dso: string;
  label: string;
  /** The script of a JIT frame ('node:_http_server', a file path), else ''. */
  file: string;
}

function frameOf(line: string): Frame {
  // "    7f0c2d1 symbol+0x12 (/path/to/dso)"
  const m = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$/.exec(line);
  const sym = (m?.[1] ?? line.trim()).replace(/\+0x[0-9a-f]+$/, '');
  const dso = m?.[2] ?? '';
  const js = JIT_SYMBOL.exec(sym);
  return { name: js ? js[1] || '(anonymous)' : sym, sym, dso, label: `${shortSym(sym)} (${shortDso(dso)})`, file: js?.[2] ?? '' };
}

// JIT symbols: "JS:*name /abs/path/file.js:line:col" (* optimized, ~ interpreted, ^ baseline, + maglev).
const JIT_SYMBOL = /^(?:JS|LazyCompile|Function):[*~^+]?(\S*)\s+(?:file:\/\/)?(\S+?)(?::(\d+))?(?::\d+)?$/;

function shortSym(sym: string): string {
  const js = JIT_SYMBOL.exec(sym);
  if (js) return `${js[1] || '(anonymous)'} ${js[2]!.split('/').slice(-2).join('/')}:${js[3] ?? ''}`;
  return sym.length > 90 ? sym.slice(0, 90) + '…' : sym;
}

function shortDso(dso: string): string {
  if (dso.startsWith('[')) return dso;
  const parts = dso.split('/');
  const nm = parts.lastIndexOf('node_modules');
  return nm >= 0 ? parts.slice(nm + 1, nm + 2).join('/') : parts[parts.length - 1]!;
}

function stepOf(frames: Frame[]): string {
  for (const f of frames) {
    for (const [step, re] of STEPS) if (re.test(f.name)) return step;
  }
  // In no step: by the system call it is in, else by where the leaf is.
  for (const f of frames) {
    const sys = /^__(?:x64|do)_sys_(\w+)/.exec(f.sym);
    if (sys) return `system call ${sys[1]}`;
  }
  const user = frames.find((f) => !f.dso.startsWith('[kernel'));
  const dso = user ? shortDso(user.dso) : '';
  if (dso.startsWith('uws_') || dso.includes('uWebSockets')) return 'HTTP stack (uWS C++)';
  // node:http's counterpart: its parser (llhttp, in the node binary) or, innermost, its JS modules.
  if (/^llhttp__|node::\(anonymous namespace\)::Parser::/.test(user?.sym ?? '') || frames.find((f) => f.file)?.file.startsWith('node:_http_')) return 'HTTP stack (node:http)';
  if (dso === 'lmdb') return 'LMDB (other)';
  if (dso === 'libuv.so.1' || /uv_|epoll/.test(user?.sym ?? '')) return 'event loop';
  if (!user) return 'kernel (other)';
  if (dso === 'node') return 'Node/V8 runtime (promises, callbacks, builtins)';
  if (dso.startsWith('[JIT]') || dso.includes('perf-')) return `JS elsewhere`;
  return `other: ${dso}`;
}
