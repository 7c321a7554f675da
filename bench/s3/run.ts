/**
 * `npm run bench:s3`: the hand-written S3 client (outbound/s3-client.ts + sigv4.ts, what
 * objects/s3-store.ts uses) against @aws-sdk/client-s3 (+ @aws-sdk/lib-storage for multipart),
 * in the same run, against the local S3 test server (testkit/s3.ts: @20minutes/s3rver behind a
 * front that refuses unsigned requests, on 127.0.0.1, storing on this machine's disk).
 *
 * Each client runs in a process of its own (child.ts) so its peak resident set is its own. Per
 * object size, the two clients take turns (the order flips every repetition): PUT then GET of
 * their own key. 64 KiB bodies come from memory; larger ones stream from a file, as a snapshot
 * upload would. The hand-written client has no multipart upload: at 512 MiB it sends one
 * streamed PUT, the SDK both one PutObject and a multipart Upload.
 *
 * Writes results/s3-clients.md; text below its KEEP marker (the recommendation) is carried over.
 * The server is the same process for both clients and is the bottleneck for large objects: the
 * ratios say what a client adds, not what real object storage would do.
 */
import { fork, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startS3, S3_KEY, S3_SECRET, type LocalS3 } from '../../testkit/s3.js';
import { cpuInfo, gitCommit } from '../ann/env.js';
import { paths } from '../ann/paths.js';
import { percentiles } from '../http/stats.js';
import type { ClientName, Command, OpResult, Source } from './child.js';
import { CutProxy } from '../../testkit/cut-proxy.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const BUCKET = 'bench';
const KEEP = '<!-- bench:s3 keeps the text below this line when it rewrites the file -->';
const MULTIPART = { partSize: 8 * MiB, queueSize: 4 };

interface Phase {
  label: string;
  size: number;
  reps: number;
  /** Which client does what in this phase. */
  variants: { client: ClientName; multipart: boolean }[];
}

interface Options {
  reps: number;
  big: boolean;
}

function parse(argv: string[]): Options {
  const o: Options = { reps: 1, big: true };
  for (const a of argv) {
    const [k, v] = a.replace(/^--/, '').split('=');
    if (k === 'reps') o.reps = Number(v);
    else if (k === 'no-big') o.big = false;
    else if (k === 'help') {
      console.log('npm run bench:s3 -- [--reps=1 (a multiplier of each size\'s repetitions)] [--no-big (skip 512 MiB)]');
      process.exit(0);
    } else throw new Error(`unknown flag ${a}`);
  }
  return o;
}

function phases(o: Options): Phase[] {
  const both = [{ client: 'hand' as const, multipart: false }, { client: 'sdk' as const, multipart: false }];
  const list: Phase[] = [
    { label: '64 KiB', size: 64 * KiB, reps: 200 * o.reps, variants: both },
    { label: '8 MiB', size: 8 * MiB, reps: 20 * o.reps, variants: both },
    { label: '128 MiB', size: 128 * MiB, reps: 4 * o.reps, variants: both },
  ];
  if (o.big) {
    list.push({ label: '512 MiB', size: 512 * MiB, reps: 2 * o.reps, variants: both });
    list.push({ label: '512 MiB', size: 512 * MiB, reps: 2 * o.reps, variants: [{ client: 'sdk', multipart: true }] });
  }
  return list;
}

/** A forked client and a request/answer helper over its IPC channel. */
class Child {
  private readonly proc: ChildProcess;
  private waiting: ((m: any) => void) | null = null;
  readonly ready: Promise<void>;
  /** RSS once the client's modules are loaded and one GC ran. */
  startMiB = NaN;

  constructor(readonly name: ClientName, endpoint: string) {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'child.js');
    this.proc = fork(script, [name, endpoint, BUCKET, S3_KEY, S3_SECRET], { execArgv: ['--expose-gc', '--no-deprecation'], stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    // The SDK warns once that releases after January 2027 need Node 22: kept out of the bench's output.
    this.proc.stderr!.on('data', (c: Buffer) => {
      const s = String(c);
      if (!/NodeVersionSupportWarning|will require node|upgrade to node|More information can be found|trace-warnings|^\s*$/m.test(s)) process.stderr.write(s);
    });
    this.ready = new Promise((resolve, reject) => {
      this.proc.once('message', (m: { rssKiB: number }) => {
        this.startMiB = m.rssKiB / 1024;
        resolve();
      });
      this.proc.once('exit', (code) => reject(new Error(`${name} child exited with ${code}`)));
    });
    this.proc.on('message', (m) => {
      const w = this.waiting;
      this.waiting = null;
      w?.(m);
    });
  }

  async call<T>(cmd: Command): Promise<T> {
    const answer = await new Promise<any>((resolve) => {
      this.waiting = resolve;
      this.proc.send(cmd);
    });
    if (!answer.ok) throw new Error(`${this.name}: ${answer.error}`);
    return answer as T;
  }

  async stop(): Promise<void> {
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.send({ op: 'exit' });
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}

interface Row {
  phase: string;
  variant: string;
  op: 'PUT' | 'GET';
  size: number;
  samples: OpResult[];
  peakMiB: number;
}

function variantName(v: { client: ClientName; multipart: boolean }): string {
  if (v.client === 'hand') return 'hand-written';
  return v.multipart ? `SDK multipart (${MULTIPART.partSize / MiB} MiB parts, ${MULTIPART.queueSize} in flight)` : 'SDK';
}

async function md5File(path: string): Promise<string> {
  const h = createHash('md5');
  for await (const c of createReadStream(path)) h.update(c as Buffer);
  return h.digest('hex');
}

/** The body a child builds for a buffer source, to check ETags against. */
function bufferBody(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) b.writeUInt32LE((i * 2654435761) >>> 0, i);
  return b;
}

/** A file of `size` random bytes (incompressible: no server or disk may shortcut it). */
function makeFile(dir: string, size: number): string {
  const path = join(dir, `body-${size}`);
  writeFileSync(path, randomFillSync(Buffer.allocUnsafe(size)));
  return path;
}

/** Bytes of a package directory, its nested node_modules left out (they are packages of their own). */
function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules') continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) n += dirBytes(p);
    else if (e.isFile()) n += statSync(p).size;
  }
  return n;
}

/**
 * The SDK's installed closure from package-lock.json: the packages @aws-sdk/client-s3 and
 * @aws-sdk/lib-storage pull in, resolved as Node does (nested node_modules first), and which of
 * them nothing else in the project needs.
 */
function sdkWeight(): { packages: number; bytes: number; onlySdk: number; onlySdkBytes: number } {
  const lock = JSON.parse(readFileSync(join(paths.root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string> }> };
  const pkgs = lock.packages;
  const resolve = (from: string, dep: string): string | null => {
    for (let base = from; ; ) {
      const candidate = `${base ? base + '/' : ''}node_modules/${dep}`;
      if (pkgs[candidate]) return candidate;
      if (!base) return null;
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  };
  const closure = (roots: string[]): Set<string> => {
    const seen = new Set<string>();
    const stack = [...roots];
    while (stack.length) {
      const p = stack.pop()!;
      if (seen.has(p)) continue;
      seen.add(p);
      const deps = { ...pkgs[p]?.dependencies, ...pkgs[p]?.optionalDependencies };
      for (const d of Object.keys(deps)) {
        const r = resolve(p, d);
        if (r) stack.push(r);
      }
    }
    return seen;
  };
  const sdkRoots = ['node_modules/@aws-sdk/client-s3', 'node_modules/@aws-sdk/lib-storage'];
  const sdk = closure(sdkRoots);
  const root = pkgs[''] as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
  const others = Object.keys({ ...root.dependencies, ...root.devDependencies })
    .map((d) => `node_modules/${d}`)
    .filter((p) => !sdkRoots.includes(p) && pkgs[p]);
  const rest = closure(others);
  let bytes = 0;
  let onlySdkBytes = 0;
  let onlySdk = 0;
  for (const p of sdk) {
    const dir = join(paths.root, p);
    if (!existsSync(dir)) continue;
    const b = dirBytes(dir);
    bytes += b;
    if (!rest.has(p)) {
      onlySdk++;
      onlySdkBytes += b;
    }
  }
  return { packages: sdk.size, bytes, onlySdk, onlySdkBytes };
}

/** Milliseconds to import a module in a fresh Node (median of 3). */
function importMs(specifier: string): number {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const out = execFileSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', `const t=performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now()-t)`], { cwd: paths.root, encoding: 'utf8' });
    times.push(Number(out.trim()));
  }
  return times.sort((a, b) => a - b)[1]!;
}

interface Probe {
  what: string;
  outcome: Record<ClientName, string>;
}

/**
 * What each client does when its connection is cut mid-transfer (CutProxy): a fresh pair of
 * client processes talks to the server through the proxy; after each call the object is checked
 * through the direct clients (ETag = MD5 of the body sent; multipart: its size on a GET).
 */
async function faultProbe(s3: LocalS3, direct: Map<ClientName, Child>, file8: { path: string; md5: string }): Promise<Probe[]> {
  const proxy = new CutProxy(new URL(s3.endpoint));
  const endpoint = await proxy.start();
  const cut = 1 * MiB;
  const clients = (['hand', 'sdk'] as const).map((n) => new Child(n, endpoint));
  const withTimeout = <T>(p: Promise<T>) => Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error('no answer in 60 s')), 60_000))]);
  const bufMd5 = createHash('md5').update(bufferBody(8 * MiB)).digest('hex');
  const cases: { what: string; direction: 'up' | 'down'; run: (c: Child) => Promise<string> }[] = [
    {
      what: 'GET of 8 MiB, the connection cut after 1 MiB of the answer',
      direction: 'down',
      run: async (c) => {
        const r = await c.call<OpResult>({ op: 'get', key: `${c.name}/8MiB`, size: 8 * MiB });
        return `ok, ${r.bytes} bytes`;
      },
    },
    {
      what: 'PUT of 8 MiB from memory, cut after 1 MiB of the body',
      direction: 'up',
      run: async (c) => {
        const r = await c.call<OpResult>({ op: 'put', key: `${c.name}/probe-buffer`, source: { kind: 'buffer', size: 8 * MiB } });
        return r.etag === bufMd5 ? 'ok, stored bytes = sent (ETag = MD5)' : `answered ok but stored other bytes (ETag ${r.etag})`;
      },
    },
    {
      what: 'PUT of 8 MiB streamed from a file, cut after 1 MiB of the body',
      direction: 'up',
      run: async (c) => {
        const r = await c.call<OpResult>({ op: 'put', key: `${c.name}/probe-file`, source: { kind: 'file', path: file8.path, size: 8 * MiB } });
        return r.etag === file8.md5 ? 'ok, stored bytes = sent (ETag = MD5)' : `answered ok but stored other bytes (ETag ${r.etag})`;
      },
    },
    {
      what: 'multipart upload of 8 MiB streamed from a file (5 MiB parts), cut after 1 MiB of a part',
      direction: 'up',
      run: async (c) => {
        if (c.name === 'hand') return 'n/a (no multipart upload)';
        const key = `${c.name}/probe-mp`;
        await c.call<OpResult>({ op: 'put', key, source: { kind: 'file', path: file8.path, size: 8 * MiB }, multipart: { partSize: 5 * MiB, queueSize: 1 } });
        const back = await direct.get(c.name)!.call<OpResult>({ op: 'get', key, size: 8 * MiB, md5: true });
        return back.etag === file8.md5 ? 'ok, stored bytes = sent (read back, MD5)' : `answered ok but stored other bytes (MD5 ${back.etag})`;
      },
    },
  ];
  const out: Probe[] = [];
  try {
    await Promise.all(clients.map((c) => c.ready));
    for (const k of cases) {
      const outcome = {} as Record<ClientName, string>;
      for (const c of clients) {
        const cutsBefore = proxy.cuts;
        proxy.arm(k.direction, cut);
        let text: string;
        try {
          text = await withTimeout(k.run(c));
        } catch (e) {
          text = `error: ${String((e as Error).message).split('\n')[0]!.replace(/^(hand|sdk): /, '').replace(/^Error: /, '').replace(/\|/g, '/').slice(0, 140)}`;
        }
        proxy.disarm();
        outcome[c.name] = proxy.cuts > cutsBefore || text.startsWith('n/a') ? text : `${text} (the cut did not happen)`;
      }
      out.push({ what: k.what, outcome });
      process.stderr.write(`bench:s3: probe ${k.what}: ${JSON.stringify(outcome)}\n`);
    }
  } finally {
    for (const c of clients) await c.stop().catch(() => {});
    await proxy.stop();
  }
  return out;
}

function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '–';
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const t0 = performance.now();
  const loadStart = loadavg()[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'sable-bench-s3-'));
  let s3: LocalS3 | undefined;
  const children: Child[] = [];
  const rows: Row[] = [];
  const startRss = new Map<ClientName, number>();
  let probes: Probe[] = [];
  let byName: Map<ClientName, Child>;
  try {
    const list = phases(o);
    const files = new Map<number, { path: string; md5: string }>();
    for (const p of list) {
      if (p.size > 64 * KiB && !files.has(p.size)) {
        const path = makeFile(dir, p.size);
        files.set(p.size, { path, md5: await md5File(path) });
      }
    }
    const small = createHash('md5').update(bufferBody(64 * KiB)).digest('hex');
    s3 = await startS3(BUCKET);
    byName = new Map<ClientName, Child>();
    for (const name of ['hand', 'sdk'] as const) {
      const c = new Child(name, s3.endpoint);
      children.push(c);
      byName.set(name, c);
    }
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) startRss.set(c.name, c.startMiB);
    // Warm-up (connections, JIT), not recorded.
    for (let i = 0; i < 20; i++) {
      for (const c of children) {
        await c.call({ op: 'put', key: `${c.name}/warm`, source: { kind: 'buffer', size: 64 * KiB } });
        await c.call({ op: 'get', key: `${c.name}/warm`, size: 64 * KiB });
      }
    }
    for (const phase of list) {
      const source: Source = phase.size <= 64 * KiB ? { kind: 'buffer', size: phase.size } : { kind: 'file', path: files.get(phase.size)!.path, size: phase.size };
      const expected = phase.size <= 64 * KiB ? small : files.get(phase.size)!.md5;
      for (const c of children) await c.call({ op: 'reset-peak' });
      const put = new Map<string, OpResult[]>();
      const got = new Map<string, OpResult[]>();
      for (const v of phase.variants) {
        put.set(variantName(v), []);
        got.set(variantName(v), []);
      }
      process.stderr.write(`bench:s3: ${phase.label} x ${phase.reps} (${phase.variants.map(variantName).join(', ')})\n`);
      for (let r = 0; r < phase.reps; r++) {
        const order = r % 2 === 0 ? phase.variants : [...phase.variants].reverse();
        for (const v of order) {
          const key = `${v.client}/${phase.label.replace(' ', '')}${v.multipart ? '-mp' : ''}`;
          const res = await byName.get(v.client)!.call<OpResult>({ op: 'put', key, source, ...(v.multipart ? { multipart: MULTIPART } : {}) });
          if (r === 0) {
            // The stored bytes are the ones sent: a one-part ETag is the body's MD5; a multipart
            // ETag is not (s3rver's carries no -<parts> suffix either), so that object is read back
            // and hashed once, untimed.
            const etag = v.multipart ? (await byName.get(v.client)!.call<OpResult>({ op: 'get', key, size: phase.size, md5: true })).etag : res.etag;
            if (etag !== expected) throw new Error(`${variantName(v)} PUT ${phase.label}: stored MD5 ${etag}, sent ${expected}`);
          }
          put.get(variantName(v))!.push(res);
        }
        for (const v of order) {
          const key = `${v.client}/${phase.label.replace(' ', '')}${v.multipart ? '-mp' : ''}`;
          got.get(variantName(v))!.push(await byName.get(v.client)!.call<OpResult>({ op: 'get', key, size: phase.size }));
        }
      }
      for (const v of phase.variants) {
        const { peakKiB } = await byName.get(v.client)!.call<{ peakKiB: number }>({ op: 'peak' });
        for (const [op, m] of [['PUT', put], ['GET', got]] as const) {
          rows.push({ phase: phase.label, variant: variantName(v), op, size: phase.size, samples: m.get(variantName(v))!, peakMiB: peakKiB / 1024 });
        }
      }
    }
    probes = await faultProbe(s3, byName, files.get(8 * MiB)!);
  } finally {
    for (const c of children) await c.stop().catch(() => {});
    await s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const seconds = (performance.now() - t0) / 1000;
  const loadEnd = loadavg()[0]!;

  const weight = sdkWeight();
  const handBytes = ['outbound/s3-client.ts', 'outbound/sigv4.ts'].reduce((s, f) => s + statSync(join(paths.root, f)).size, 0);
  const imports = { sdk: importMs('@aws-sdk/client-s3'), lib: importMs('@aws-sdk/lib-storage'), hand: importMs('./dist/outbound/s3-client.js') };

  const stat = (r: Row) => {
    const ms = Float64Array.from(r.samples, (s) => s.ms);
    const [p50, p99] = percentiles(ms, [0.5, 0.99]);
    const totalMs = r.samples.reduce((s, x) => s + x.ms, 0);
    const cpuMs = r.samples.reduce((s, x) => s + x.cpuMs, 0);
    const bytes = r.samples.reduce((s, x) => s + x.bytes, 0);
    return { p50: p50!, p99: p99!, mibps: bytes / MiB / (totalMs / 1000), opsps: r.samples.length / (totalMs / 1000), cpuPerGiB: cpuMs / (bytes / (1024 * MiB)), n: r.samples.length };
  };
  const table = [
    '| size | client | op | n | MiB/s | ops/s | p50 ms | p99 ms | client CPU ms per GiB | peak RSS MiB (phase) |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => {
      const s = stat(r);
      return `| ${r.phase} | ${r.variant} | ${r.op} | ${s.n} | ${fmt(s.mibps)} | ${fmt(s.opsps)} | ${fmt(s.p50, 2)} | ${fmt(s.p99, 2)} | ${fmt(s.cpuPerGiB, 0)} | ${fmt(r.peakMiB, 0)} |`;
    }),
  ];
  const ratios = ['| size | op | SDK / hand: MiB/s | SDK / hand: p50 | SDK / hand: p99 | SDK / hand: CPU per GiB | SDK / hand: peak RSS |', '| --- | --- | ---: | ---: | ---: | ---: | ---: |'];
  for (const r of rows.filter((x) => x.variant !== 'hand-written')) {
    const h = rows.find((x) => x.variant === 'hand-written' && x.phase === r.phase && x.op === r.op);
    if (!h) continue;
    const a = stat(r);
    const b = stat(h);
    const label = r.variant === 'SDK' ? r.phase : `${r.phase}, ${r.variant} vs one PUT`;
    ratios.push(`| ${label} | ${r.op} | ${fmt(a.mibps / b.mibps, 2)}x | ${fmt(a.p50 / b.p50, 2)}x | ${fmt(a.p99 / b.p99, 2)}x | ${fmt(a.cpuPerGiB / b.cpuPerGiB, 2)}x | ${fmt(r.peakMiB / h.peakMiB, 2)}x |`);
  }
  const cpu = cpuInfo();
  const out = join(paths.results, 's3-clients.md');
  const kept = existsSync(out) ? readFileSync(out, 'utf8').split(KEEP)[1] : undefined;
  const md = [
    '# S3 clients: hand-written against @aws-sdk/client-s3',
    '',
    `Command: \`npm run bench:s3${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}\`; commit ${gitCommit()}; ${cpu.model}, ${cpu.cores} cores, shared with other work (load average ${fmt(loadStart, 2)} at start, ${fmt(loadEnd, 2)} at end: noisy); Node ${process.version}; ${fmt(seconds, 0)} s.`,
    '',
    '- Server: the local S3 test server (`testkit/s3.ts`: @20minutes/s3rver 4.0.4 behind a front that refuses unsigned requests, one Node process on 127.0.0.1 storing into a temporary directory on this disk). It is shared by both clients and is the bottleneck for large objects (it MD5s and writes every byte, and a multipart upload is written twice: parts, then the assembled object): the figures compare what each client adds, not what AWS S3 or another server would sustain.',
    '- Clients, each in a process of its own (`bench/s3/child.ts`): **hand-written** = `outbound/s3-client.ts` `send()` with `outbound/sigv4.ts` headers (UNSIGNED-PAYLOAD, a streamed body of known length; what `objects/s3-store.ts` uses); **SDK** = `@aws-sdk/client-s3` 3.1169.0 `PutObject` / `GetObject` with `forcePathStyle` and `requestChecksumCalculation` / `responseChecksumValidation` = `WHEN_REQUIRED` (../shared/libraries.md), and `@aws-sdk/lib-storage` 3.1169.0 `Upload` for the multipart row. Neither sends a checksum in this configuration.',
    '- Per size the clients take turns (the order flips every repetition): PUT of its own key, then GET of it (the body drained, its length checked). 64 KiB bodies come from memory, larger ones stream from a file of random bytes (as a snapshot would). Every first PUT of a size is checked: its ETag is the body\'s MD5 (multipart: the object read back and hashed, untimed). 20 untimed 64 KiB round trips per client first.',
    '- Times are taken in the client\'s process around the call alone. MiB/s = bytes / summed call time (calls one at a time). p99 of 2 or 4 samples is their maximum. Client CPU = user + system time of the client process during the calls (the server\'s work not included). Peak RSS = VmHWM of the client process over that size\'s calls (reset to the current RSS after a GC at the start of each size); each process loads only its own client (its RSS once loaded is under Weight).',
    '- The hand-written client has **no multipart upload**: at 512 MiB it sends one streamed PUT (S3 takes up to 5 GiB in one PUT). The SDK is measured both ways.',
    '',
    '## Results',
    '',
    ...table,
    '',
    '## Ratios (SDK / hand-written, same run)',
    '',
    'Above 1 means the SDK is faster (MiB/s) or larger (latency, CPU, memory).',
    '',
    ...ratios,
    '',
    '## A connection cut mid-transfer',
    '',
    'A TCP front (`testkit/cut-proxy.ts`) between a fresh client process and the server resets the connection once 1 MiB has passed in the direction named; the object is then checked through a direct client. Hand-written: no retry. SDK: its default standard retry strategy (3 attempts).',
    '',
    '| case | hand-written | SDK |',
    '| --- | --- | --- |',
    ...probes.map((p) => `| ${p.what} | ${p.outcome.hand} | ${p.outcome.sdk} |`),
    '',
    '## Weight',
    '',
    `| | hand-written | @aws-sdk/client-s3 + lib-storage 3.1169.0 |`,
    '| --- | ---: | ---: |',
    `| installed | ${(handBytes / KiB).toFixed(0)} KiB of TypeScript (2 files), no dependency | ${weight.packages} packages, ${(weight.bytes / MiB).toFixed(1)} MiB on disk (${weight.onlySdk} of them, ${(weight.onlySdkBytes / MiB).toFixed(1)} MiB, needed by nothing else in the project) |`,
    `| RSS of the client's process once loaded (after a GC) | ${fmt(startRss.get('hand')!, 0)} MiB | ${fmt(startRss.get('sdk')!, 0)} MiB |`,
    `| import in a fresh Node (median of 3) | ${fmt(imports.hand, 0)} ms | client-s3 ${fmt(imports.sdk, 0)} ms, lib-storage ${fmt(imports.lib, 0)} ms |`,
    '',
    KEEP,
    kept ?? '\n## Recommendation\n\n(written by hand after reading the figures)\n',
  ].join('\n');
  writeFileSync(out, md);
  console.log(md.split(KEEP)[0]);
  console.error(`bench:s3: wrote ${out}`);
}

await main();
