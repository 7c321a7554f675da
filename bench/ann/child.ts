// One library on one data set, in its own process (clean memory figures; a crash in a native
// library cannot take the run down). Started by run.ts as
//   node --expose-gc child.js '<ChildTask JSON>'
// and answers with one line `RESULT <LibRun JSON>` on stdout; progress goes to stderr.
import { spawn } from 'node:child_process';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSet, basePath, queriesPath, type LoadedSet } from './datasets.js';
import { readGroundTruth } from './groundtruth.js';
import { ExactDistance, recallAtK, type GroundTruth } from './metrics.js';
import { paths } from './paths.js';
import { createHnswlib } from './libs/hnswlib.js';
import { createSable } from './libs/sable.js';
import { createUsearch } from './libs/usearch.js';
import { createLancedb } from './libs/lancedb.js';
import { emptyLibRun, type Adapter, type ChildTask, type FilteredPoint, type LibRun, type SweepPoint } from './libs/types.js';

const task = JSON.parse(process.argv[2] ?? '{}') as ChildTask;
const say = (msg: string) => process.stderr.write(`[${task.lib}/${task.set}] ${msg}\n`);

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

/** Idle time before the settled memory figure: V8's memory reducer acts after a few seconds. */
const SETTLE_MS = 6000;

function rss(): number {
  gc();
  return process.memoryUsage.rss();
}

/** Anonymous resident memory (RssAnon of /proc/self/status), bytes; null without /proc. */
function rssAnon(): number | null {
  try {
    const kb = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

/** Best of up to three passes (repeated while the passes so far took under 0.3 s). */
async function timed<T>(fn: () => Promise<T>): Promise<{ seconds: number; first: T }> {
  let best = Infinity;
  let total = 0;
  let first: T | undefined;
  for (let rep = 0; rep < 3 && (rep === 0 || total < 0.3); rep++) {
    const t0 = process.hrtime.bigint();
    const r = await fn();
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    if (rep === 0) first = r;
    best = Math.min(best, s);
    total += s;
  }
  return { seconds: best, first: first as T };
}

function emptyRun(data: LoadedSet | null): LibRun {
  return emptyLibRun(task, data?.n ?? task.n, data?.meta.dim ?? 0);
}

async function runAdapter(adapter: Adapter, data: LoadedSet, gt: GroundTruth, exact: ExactDistance): Promise<LibRun> {
  const run = emptyRun(data);
  run.version = adapter.version;
  run.build = adapter.buildLabel;
  run.buildThreads = adapter.buildThreads;
  const all = gt.cases.find((c) => c.threshold === null)!;
  const nq = data.nq;

  const rss0 = rss();
  const anon0 = rssAnon();
  const t0 = process.hrtime.bigint();
  await adapter.build(data);
  run.buildSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  run.rssBytes = rss() - rss0;
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  run.rssSettledBytes = rss() - rss0;
  const anon = rssAnon();
  run.rssAnonSettledBytes = anon === null || anon0 === null ? null : anon - anon0;
  const mb = (b: number) => (b / 2 ** 20).toFixed(0);
  say(`built in ${run.buildSeconds.toFixed(1)} s, RSS +${mb(run.rssBytes)} MB, settled +${mb(run.rssSettledBytes)} MB`);
  run.load = adapter.loadFigures?.();
  await adapter.afterBuild?.();
  const self = await adapter.selfSize();
  run.selfBytes = self.bytes;
  run.selfKind = self.kind;
  run.isa = adapter.isa?.();

  const settings: { label: string; value: number | null }[] = adapter.knob
    ? task.sweep.map((v) => ({ label: `${adapter.knob}=${v}`, value: v }))
    : [{ label: 'exact', value: null }];
  // Exact indexes are slow per query: quick mode measures them on fewer queries.
  const nqRun = adapter.knob ? nq : Math.min(nq, task.flatQueries);
  if (nqRun < nq) run.notes.push(`measured on the first ${nqRun} queries`);
  // Warm-up passes (caches, JIT, thread pools) before anything is timed.
  const warm = Math.min(nqRun, 200);
  await adapter.prepare?.(settings[0]!.value);
  await adapter.search(settings[0]!.value, 1, warm);
  if (!task.oneThread) await adapter.search(settings[0]!.value, 2, warm);

  const measure = async (s: { label: string; value: number | null }): Promise<{ point: SweepPoint; seconds1: number }> => {
    await adapter.prepare?.(s.value);
    const one = await timed(() => adapter.search(s.value, 1, nqRun));
    const recall = recallAtK(one.first, all, task.k, exact);
    const two = task.oneThread ? null : await timed(() => adapter.search(s.value, 2, nqRun));
    const p: SweepPoint = { param: s.label, value: s.value, recall, qps1: nqRun / one.seconds, qps2: two ? nqRun / two.seconds : null };
    say(`${s.label}: recall ${recall.toFixed(4)}, ${p.qps1.toFixed(0)} q/s (1 thread)${p.qps2 === null ? '' : `, ${p.qps2.toFixed(0)} q/s (2)`}`);
    return { point: p, seconds1: one.seconds };
  };
  for (const s of settings) {
    const { point, seconds1 } = await measure(s);
    run.points.push(point);
    if (point.recall >= task.stopRecall) break;
    if (seconds1 > task.maxSecondsPerSetting) {
      if (s !== settings[settings.length - 1]) run.notes.push(`sweep stopped after ${s.label} (${seconds1.toFixed(1)} s per pass)`);
      break;
    }
  }
  for (const s of adapter.extraSettings ?? []) run.points.push((await measure(s)).point);

  if (adapter.filteredSearch && task.selectivities.length > 0) {
    // Operating point: the cheapest swept setting reaching the recall target (else the best).
    const swept = run.points.filter((p) => !adapter.extraSettings?.some((e) => e.label === p.param));
    const op = swept.find((p) => p.recall >= task.recallTarget) ?? [...swept].sort((a, b) => b.recall - a.recall)[0]!;
    for (const c of gt.cases) {
      if (c.threshold === null) continue;
      const one = await timed(() => adapter.filteredSearch!(op.value, c.threshold!, 1, nqRun));
      const two = task.filteredTwoThreads ? await timed(() => adapter.filteredSearch!(op.value, c.threshold!, 2, nqRun)) : null;
      const f: FilteredPoint = {
        selectivity: c.selectivity,
        matching: c.matching,
        param: op.param,
        recall: recallAtK(one.first, c, task.k, exact),
        qps1: nqRun / one.seconds,
        qps2: two ? nqRun / two.seconds : null,
        strategy: adapter.filteredStrategy ? await adapter.filteredStrategy(op.value, c.threshold) : null,
      };
      // What the planner chose against an exact scan of the same matches, when it chose the index.
      if (adapter.filteredExactSearch && f.strategy && !/^exact(\+none)?$/.test(f.strategy)) {
        const exactRun = await timed(() => adapter.filteredExactSearch!(c.threshold!, 1, nqRun));
        f.qpsExact = nqRun / exactRun.seconds;
      }
      say(`filter ${c.name} (${(c.selectivity * 100).toFixed(1)}%): recall ${f.recall.toFixed(4)}, ${f.qps1.toFixed(0)} q/s${f.strategy ? `, ${f.strategy}` : ''}`);
      run.filtered.push(f);
    }
  }
  run.notes.push(...adapter.notes);
  await adapter.close();
  return run;
}

async function runFaiss(data: LoadedSet, gt: GroundTruth, exact: ExactDistance): Promise<LibRun> {
  const run = emptyRun(data);
  const all = gt.cases.find((c) => c.threshold === null)!;
  const kind = task.lib.replace('faiss-', '');
  const nq = kind === 'flat' ? Math.min(data.nq, task.flatQueries) : data.nq;
  if (nq < data.nq) run.notes.push(`measured on the first ${nq} queries`);
  const stamp = `${task.lib}-${task.set}-${process.pid}`;
  const gtFile = join(task.tmpDir, `${stamp}.gt.i32`);
  const outFile = join(task.tmpDir, `${stamp}.ids.i32`);
  const gtIds = new Int32Array(nq * task.k).fill(-1);
  all.ids.slice(0, nq).forEach((row, q) => gtIds.set(row.slice(0, task.k), q * task.k));
  writeFileSync(gtFile, new Uint8Array(gtIds.buffer));
  const args = [
    ['base', basePath(task.set)],
    ['n', data.n],
    ['dim', data.meta.dim],
    ['queries', queriesPath(task.set)],
    ['nq', nq],
    ['k', task.k],
    ['metric', data.meta.metric],
    ['index', kind],
    ['m', task.hnsw.m],
    ['efc', task.hnsw.efConstruction],
    ['nlist', task.nlist],
    ['sweep', kind === 'flat' ? '0' : task.sweep.join(',')],
    ['gt', gtFile],
    ['stop-recall', task.stopRecall],
    ['max-seconds', task.maxSecondsPerSetting],
    ['out', outFile],
  ].flatMap(([k, v]) => [`--${k}`, String(v)]);
  const lines: Record<string, unknown>[] = [];
  await new Promise<void>((resolve, reject) => {
    const p = spawn(paths.faissBinary, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    p.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        const ev = JSON.parse(line) as Record<string, unknown>;
        lines.push(ev);
        if (ev.event === 'build') say(`built in ${Number(ev.seconds).toFixed(1)} s`);
        if (ev.event === 'point') say(`value ${String(ev.value)}: recall(ids) ${Number(ev.recall_ids).toFixed(4)}, ${(nq / Number(ev.seconds1)).toFixed(0)} q/s`);
      }
    });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`faiss_bench exited with ${code}: ${JSON.stringify(lines.find((l) => l.event === 'error') ?? {})}`))));
  });
  const build = lines.find((l) => l.event === 'build')!;
  run.version = '1.7.3';
  run.build = String(build.label);
  run.buildSeconds = Number(build.seconds);
  run.buildThreads = Number(build.threads);
  run.rssBytes = Number(build.rss_delta);
  // A C++ process has no collector that hands memory back later: settled is the same figure.
  run.rssSettledBytes = run.rssBytes;
  run.selfBytes = Number(build.size);
  run.selfKind = 'write_index size';
  run.isa = `compile options: ${String(build.options).trim() || 'none'}`;
  // Copy out: a small Buffer is a view into Node's shared pool, not at offset 0 of its ArrayBuffer.
  const raw = readFileSync(outFile);
  const ids = new Int32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  const knob = kind === 'hnsw' ? 'efSearch' : kind === 'ivf' ? 'nprobe' : null;
  lines
    .filter((l) => l.event === 'point')
    .forEach((l, i) => {
      const rows: Int32Array[] = [];
      for (let q = 0; q < nq; q++) rows.push(ids.subarray((i * nq + q) * task.k, (i * nq + q + 1) * task.k));
      run.points.push({
        param: knob ? `${knob}=${String(l.value)}` : 'exact',
        value: knob ? Number(l.value) : null,
        recall: recallAtK(rows, all, task.k, exact),
        qps1: nq / Number(l.seconds1),
        qps2: nq / Number(l.seconds2),
      });
    });
  if (kind === 'ivf') run.notes.push('IVFFlat (f32 lists); k-means: 10 iterations, at most 64 training points per list');
  if (data.meta.metric === 'cosine') run.notes.push('cosine as inner product on L2-normalised vectors');
  if (!task.keepTmp) for (const f of [gtFile, outFile]) unlinkSync(f);
  return run;
}

async function main(): Promise<void> {
  let data: LoadedSet | null = null;
  let result: LibRun;
  try {
    data = loadSet(task.set, task.n, task.nq);
    const gt = readGroundTruth(task.gtFile);
    const exact = new ExactDistance(data.base, data.queries, data.meta.dim, data.meta.metric);
    if (task.lib.startsWith('faiss-')) {
      result = await runFaiss(data, gt, exact);
    } else {
      const adapter =
        task.lib === 'hnswlib' ? createHnswlib(task) : task.lib === 'usearch' ? createUsearch(task) : task.lib.startsWith('lancedb') ? createLancedb(task) : await createSable(task);
      result = await runAdapter(adapter, data, gt, exact);
    }
  } catch (e) {
    result = emptyRun(data);
    result.error = e instanceof Error ? e.message : String(e);
    say(`failed: ${result.error}`);
  }
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  // Native libraries may keep threads alive; the result is out, so leave now.
  process.exit(0);
}

void main();
