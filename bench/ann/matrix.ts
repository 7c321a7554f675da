// `npm run bench:ann:matrix [-- --sets= --sizes= --patterns= --only= --full]`: sable loaded the
// ways users load (bulk, batches of 10,000 and 100, single rows, a bulk load then 20% deleted)
// through the engine's default promotion policy, at each size, against hnswlib built once per set
// and size, one search thread; each cell held to issue 30's bar. Writes
// bench/results/ann-matrix.md and ann-matrix.json.
//
// The pieces are bench:ann's: the data sets, the ground truth (read deeper, so deletes can be
// taken out), one child process per run (child.ts) with its sweep driver, the adapters.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseMatrixArgs, type MatrixLib, type MatrixPlan, type SetName } from './config.js';
import { prepareSet, type SetMeta } from './datasets.js';
import { cpuInfo, ensureGroundTruthTool, ensureHnswlib, ensureUsearch, gitCommit, type CpuInfo, type PeerSetup } from './env.js';
import { ensureGroundTruth, groundTruthAfterDeletes } from './groundtruth.js';
import { packageVersion } from './libs/hnswlib.js';
import { deletedShare, type ChildTask, type LibRun, type LoadPattern, type SweepPoint } from './libs/types.js';
import { ensureDir, paths } from './paths.js';
import { bestAtTarget, fmtInt, fmtMB, skipLine, table } from './report.js';
import { runChild } from './spawn-child.js';

/** A child's run and the loading pattern it was given (a peer's plain build: null). */
type MatrixRun = LibRun & { pattern: LoadPattern | null };

interface PointSummary {
  lib: string;
  param: string;
  recall: number;
  qps: number;
}

/** One cell: sable loaded one way at one size, against the peers' best on the same rows. */
interface Cell {
  set: SetName;
  n: number;
  pattern: LoadPattern;
  error: string | null;
  partitions: number | null;
  loadSeconds: number | null;
  settleSeconds: number | null;
  /** sable's stats().memory_bytes once settled. */
  memoryBytes: number | null;
  anonSettledBytes: number | null;
  /** The smallest settled RSS growth among the peers. */
  peerRssSettled: { lib: string; bytes: number } | null;
  default: PointSummary | null;
  targets: { recall: number; ratioNeeded: number; sable: PointSummary | null; peer: PointSummary | null; ratio: number | null; met: boolean }[];
  met: { ratios: boolean; defaultRecall: boolean; memory: boolean; all: boolean };
}

interface MatrixReport {
  command: string;
  startedAt: string;
  seconds: number;
  commit: string;
  cpu: CpuInfo;
  node: string;
  isa: string | null;
  load: [number, number];
  versions: Record<string, string>;
  plan: Omit<MatrixPlan, 'outDir' | 'keepTmp' | 'rebuildPeers'>;
  sets: Partial<Record<SetName, Pick<SetMeta, 'dim' | 'metric' | 'count' | 'source'> & { sizes: number[] }>>;
  skipped: string[];
  peerNotes: string[];
  cells: Cell[];
  runs: MatrixRun[];
}

const CHILD_TIMEOUT_MS = 30 * 60_000;

async function runMatrixChild(task: ChildTask): Promise<MatrixRun> {
  return { ...(await runChild(task, CHILD_TIMEOUT_MS)), pattern: task.load ?? null };
}

const summary = (lib: string, p: SweepPoint): PointSummary => ({ lib, param: p.param, recall: p.recall, qps: p.qps1 });

function bestPeerAt(peers: MatrixRun[], recall: number): PointSummary | null {
  let best: PointSummary | null = null;
  for (const r of peers) {
    const p = r.error ? null : bestAtTarget(r, recall);
    if (p && (!best || p.qps1 > best.qps)) best = summary(r.lib, p);
  }
  return best;
}

function cellOf(plan: MatrixPlan, sable: MatrixRun, peers: MatrixRun[]): Cell {
  const targets = plan.bar.ratios.map(({ recall, ratio: ratioNeeded }) => {
    const mine = sable.error ? null : bestAtTarget(sable, recall);
    const peer = bestPeerAt(peers, recall);
    const ratio = mine && peer ? mine.qps1 / peer.qps : null;
    return { recall, ratioNeeded, sable: mine ? summary('sable', mine) : null, peer, ratio, met: ratio !== null && ratio >= ratioNeeded };
  });
  const def = sable.points.find((p) => p.param === 'default');
  const [lo, hi] = plan.bar.defaultRecall;
  const peerRss = peers
    .filter((r) => !r.error && r.rssAnonSettledBytes != null)
    .map((r) => ({ lib: r.lib, bytes: r.rssAnonSettledBytes! }))
    .sort((a, b) => a.bytes - b.bytes)[0];
  const met = {
    ratios: targets.every((t) => t.met),
    defaultRecall: def !== undefined && def.recall >= lo && def.recall <= hi,
    memory: peerRss !== undefined && sable.rssAnonSettledBytes != null && sable.rssAnonSettledBytes <= peerRss.bytes,
  };
  return {
    set: sable.set,
    n: sable.n,
    pattern: sable.pattern!,
    error: sable.error ?? null,
    partitions: sable.load?.partitions ?? null,
    loadSeconds: sable.load?.loadSeconds ?? null,
    settleSeconds: sable.load?.settleSeconds ?? null,
    memoryBytes: sable.selfBytes,
    anonSettledBytes: sable.rssAnonSettledBytes ?? null,
    peerRssSettled: peerRss ?? null,
    default: def ? summary('sable', def) : null,
    targets,
    met: { ...met, all: met.ratios && met.defaultRecall && met.memory },
  };
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const load0 = loadavg()[0]!;
  const plan = parseMatrixArgs(process.argv.slice(2));
  const command = `npm run bench:ann:matrix${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const commit = gitCommit();
  const cpu = cpuInfo();
  const peersOf = plan.libs.filter((l): l is Exclude<MatrixLib, 'sable'> => l !== 'sable');
  process.stderr.write(
    `ANN matrix; commit ${commit}; ${cpu.model} (${cpus().length} cores; ${cpu.simd.join(' ')}); Node ${process.version}\n` +
      `sets ${plan.sets.join(', ')}; sizes ${plan.sizes.join(', ')}; patterns ${plan.patterns.join(', ')}; ${plan.queries} queries; one search thread\n` +
      `peers: ${peersOf.join(', ') || 'none'}, M=${plan.hnsw.m} efConstruction=${plan.hnsw.efConstruction} (${plan.full ? '--full' : 'quick; --full builds with efConstruction 200'})\n`,
  );

  const skipped: string[] = [];
  const peerNotes: string[] = [];
  const setups: Record<Exclude<MatrixLib, 'sable'>, () => PeerSetup> = { hnswlib: () => ensureHnswlib(plan.rebuildPeers), usearch: ensureUsearch };
  const peers = peersOf.filter((lib) => {
    const s = setups[lib]();
    peerNotes.push(...s.notes);
    if (s.skip) skipped.push(skipLine({ lib, reason: s.skip }));
    return !s.skip;
  });
  const gtTool = ensureGroundTruthTool();
  const tmpDir = ensureDir(paths.tmp);

  const base = {
    nq: plan.queries,
    k: plan.k,
    hnsw: plan.hnsw,
    // Read by sable-ivf only; the default index picks its own.
    nlist: 0,
    stopRecall: plan.stopRecall,
    maxSecondsPerSetting: plan.maxSecondsPerSetting,
    selectivities: [],
    recallTarget: plan.bar.ratios[0]!.recall,
    filteredTwoThreads: false,
    flatQueries: plan.queries,
    tmpDir,
    keepTmp: plan.keepTmp,
    oneThread: true,
  } satisfies Partial<ChildTask>;
  const sets: MatrixReport['sets'] = {};
  const runs: MatrixRun[] = [];
  const cells: Cell[] = [];
  const run = async (task: ChildTask): Promise<MatrixRun> => {
    const c0 = Date.now();
    const r = await runMatrixChild(task);
    const what = `${task.lib}/${task.set} n=${task.n}${task.load ? ` ${task.load}` : ''}`;
    process.stderr.write(`[matrix] ${what}: ${r.error ? `error: ${r.error}` : `${r.points.length} settings`} in ${((Date.now() - c0) / 1000).toFixed(0)} s\n`);
    runs.push(r);
    return r;
  };

  for (const set of plan.sets) {
    const meta = await prepareSet(set, Math.max(...plan.sizes), plan.queries);
    const sizes = [...new Set(plan.sizes.map((n) => Math.min(n, meta.count)))];
    sets[set] = { dim: meta.dim, metric: meta.metric, count: meta.count, source: meta.source, sizes };
    for (const n of sizes) {
      const deep = await ensureGroundTruth(set, n, plan.queries, plan.deepK, [], Math.min(2, cpus().length), gtTool);
      const gtFiles = new Map<number, string>();
      const gtFile = (load: LoadPattern | undefined): string => {
        const share = deletedShare(load);
        if (!gtFiles.has(share)) gtFiles.set(share, groundTruthAfterDeletes(deep.gt, deep.file, plan.k, share));
        return gtFiles.get(share)!;
      };
      const peerRuns = async (load: LoadPattern | undefined): Promise<MatrixRun[]> => {
        const out: MatrixRun[] = [];
        // usearch's adapter has no deletes: it joins the cells without them only.
        for (const lib of peers.filter((l) => !load || l === 'hnswlib')) {
          out.push(await run({ ...base, lib, set, n, gtFile: gtFile(load), sweep: plan.efSweep, ...(load ? { load } : {}) }));
        }
        return out;
      };
      const plain = await peerRuns(undefined);
      const withDeletes = plan.patterns.some((p) => deletedShare(p) > 0) ? await peerRuns('deletes-20') : [];
      if (!plan.libs.includes('sable')) continue;
      for (const load of plan.patterns) {
        const sable = await run({ ...base, lib: 'sable', set, n, gtFile: gtFile(load), sweep: plan.nprobeSweep, load });
        cells.push(cellOf(plan, sable, deletedShare(load) > 0 ? withDeletes : plain));
      }
    }
  }

  const { outDir: _outDir, keepTmp: _keepTmp, rebuildPeers: _rebuildPeers, ...measured } = plan;
  const report: MatrixReport = {
    command,
    startedAt: new Date(t0).toISOString(),
    seconds: (Date.now() - t0) / 1000,
    commit,
    cpu,
    node: process.version,
    isa: runs.find((r) => r.lib === 'sable' && r.isa)?.isa ?? null,
    load: [load0, loadavg()[0]!],
    versions: { 'hnswlib-node': packageVersion('hnswlib-node'), usearch: packageVersion('usearch') },
    plan: measured,
    sets,
    skipped,
    peerNotes,
    cells,
    runs,
  };
  const outDir = ensureDir(plan.outDir ?? paths.results);
  writeFileSync(join(outDir, 'ann-matrix.json'), `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(join(outDir, 'ann-matrix.md'), renderMarkdown(report));
  process.stdout.write(`\n${renderConsole(report)}\n\ncommit ${commit}; sable ISA ${report.isa ?? '–'}\n`);
  for (const s of skipped) process.stdout.write(`${s}\n`);
  process.stdout.write(`wrote ${join(outDir, 'ann-matrix.md')} and ann-matrix.json in ${((Date.now() - t0) / 60000).toFixed(1)} min\n`);
}

// ------------------------------------------------------------------------------------ report

const point = (p: PointSummary | null, withLib = false) =>
  p ? `${fmtInt(p.qps)} (${withLib ? `${p.lib} ` : ''}${p.param}, ${p.recall.toFixed(3)})` : '–';
const ratio = (t: Cell['targets'][number]) => (t.ratio === null ? '–' : `${t.met ? '**' : ''}${t.ratio.toFixed(2)}×${t.met ? '**' : ''}`);
const secs = (s: number | null) => (s === null ? '–' : s.toFixed(1));

/** What a cell misses of the bar, or "met". */
function verdict(c: Cell, plan: MatrixReport['plan']): string {
  if (c.error) return `**error:** ${c.error}`;
  const misses = [
    ...c.targets.filter((t) => !t.met).map((t) => `${t.ratioNeeded}× at ${t.recall}`),
    ...(c.met.defaultRecall ? [] : [`default ${c.default ? c.default.recall.toFixed(3) : '–'} outside ${plan.bar.defaultRecall.join('-')}`]),
    ...(c.met.memory ? [] : ['memory']),
  ];
  return misses.length === 0 ? '**met**' : `misses ${misses.join('; ')}`;
}

function renderMarkdown(r: MatrixReport): string {
  const out: string[] = [];
  const [t95, t99] = r.plan.bar.ratios;
  out.push('# ANN matrix: sizes × loading patterns (issue 30)');
  out.push('');
  out.push(`Generated by \`${r.command}\` on ${r.startedAt} in ${(r.seconds / 60).toFixed(1)} min.`);
  out.push('');
  out.push(`- commit: \`${r.commit}\`; Node ${r.node}`);
  out.push(`- CPU: ${r.cpu.model}, ${r.cpu.cores} cores; SIMD: ${r.cpu.simd.join(', ') || 'unknown'}; sable kernel ISA: **${r.isa ?? 'not measured'}**`);
  out.push(`- load average (1 min) before / after: ${r.load[0].toFixed(2)} / ${r.load[1].toFixed(2)} on ${r.cpu.cores} cores (above ~0.5 the machine was shared and the QPS figures are noisy)`);
  out.push(`- peers: ${r.plan.libs.filter((l) => l !== 'sable').join(', ') || 'none'} (hnswlib-node ${r.versions['hnswlib-node']}), M=${r.plan.hnsw.m} efConstruction=${r.plan.hnsw.efConstruction}${r.plan.full ? ' (--full)' : ' (quick; --full builds with 200)'}`);
  for (const n of r.peerNotes) out.push(`- peer set-up: ${n}`);
  for (const s of r.skipped) out.push(`- ${s}`);
  out.push('');
  out.push(
    `Each cell is one child process: sable's embedded API, one in-memory dataset with the engine's **default promotion policy** ` +
      '(50,000 rows or 10 s), ids and vectors only. Patterns: `bulk` one upsert of every row; `batch-10000` upserts of 10,000; ' +
      '`batch-100` upserts of 100, 256 in flight, partitions sealed at 5,000 rows (standing in for the 10 s age promotion at 500 rows/s); ' +
      '`single` upserts of one row, 256 in flight, partitions sealed at 1,000 rows (100 rows/s); `deletes-20` a bulk load, then the ' +
      'ids whose multiplicative hash falls under 0.2 deleted 1,000 a call. A flush ends every load (as a dataset idle for the ' +
      'promotion age ends: tail partitions folded). After it the child waits for the ' +
      'background seals and compactions (stats ready, nothing growing, then a second under 5% of a core) and reads ' +
      '`stats().partitions` and `memory_bytes`. The peers build once per set and size on every row (hnswlib-node has one ' +
      'build thread); for `deletes-20` they build again in a process of their own and `markDelete` the same ids.',
  );
  out.push('');
  out.push(
    `QPS: ${r.plan.queries} queries in one call (sable \`searchBatch\`, threads 1; hnswlib a \`searchKnn\` loop), best of up to 3 passes. ` +
      `recall@${r.plan.k} against the exact top ${r.plan.k} of the rows left (brute force in double precision, read off the top ${r.plan.deepK}; ` +
      `a deleted id never counts). A cell's figure at a recall is the fastest **measured** setting reaching it (no interpolation): ` +
      `sable swept nprobe ${r.plan.nprobeSweep[0]}…${r.plan.nprobeSweep.at(-1)}, the peers ef ${r.plan.efSweep[0]}…${r.plan.efSweep.at(-1)}, ` +
      `each stopping at recall ${r.plan.stopRecall} or after a pass over ${r.plan.maxSecondsPerSetting} s; "default" is sable without a knob. ` +
      `The bar: ≥ ${t95!.ratio}× the best peer at ${t95!.recall}, ≥ ${t99!.ratio}× at ${t99!.recall}, the default's recall within ` +
      `${r.plan.bar.defaultRecall.join('–')}, memory (settled growth of anonymous RSS over the load: sable's LMDB file pages, ` +
        `which the kernel may drop and reread, are left out) at or below the smallest peer's.`,
  );
  out.push('');
  for (const [set, info] of Object.entries(r.sets) as [SetName, NonNullable<MatrixReport['sets'][SetName]>][]) {
    const cells = r.cells.filter((c) => c.set === set);
    out.push(`## ${set}: ${info.dim}-d, ${info.metric}, sizes ${info.sizes.map(fmtInt).join(' / ')}`);
    out.push('');
    out.push(`Source: ${info.source}.`);
    out.push('');
    out.push(
      table(
        ['rows', 'pattern', 'partitions', 'default (recall)', `sable @${t95!.recall}`, `peer @${t95!.recall}`, '×', `sable @${t99!.recall}`, `peer @${t99!.recall}`, '×', 'anon RSS MB sable / peer', 'bar'],
        cells.map((c) => cellRow(c, r.plan)),
        ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
      ),
    );
    out.push('');
    out.push('Loads and memory (load: first write to the last flush or delete; settle: then until the background work was idle):');
    out.push('');
    const setRuns = r.runs.filter((x) => x.set === set);
    out.push(
      table(
        ['rows', 'library', 'pattern / build', 'load s', 'settle s', 'RSS Δ MB', 'settled MB', 'anon settled MB', 'own size MB', 'notes'],
        setRuns.map((x) => [
          fmtInt(x.n),
          x.lib,
          x.lib === 'sable' ? (x.pattern ?? '') : x.build || '–',
          secs(x.load?.loadSeconds ?? (x.error ? null : x.buildSeconds)),
          secs(x.load?.settleSeconds ?? null),
          fmtMB(x.rssBytes),
          fmtMB(x.rssSettledBytes),
          fmtMB(x.rssAnonSettledBytes ?? null),
          fmtMB(x.selfBytes),
          x.error ? `**error:** ${x.error}` : x.notes.join('; '),
        ]),
        ['r', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
      ),
    );
    out.push('');
  }
  out.push(`Every sweep point is in \`ann-matrix.json\` (\`runs\`).`);
  out.push('');
  return out.join('\n');
}

/** A cell's figures, from its rows to its verdict, as the markdown table and the console show them. */
function cellRow(c: Cell, plan: MatrixReport['plan']): string[] {
  const [at95, at99] = c.targets;
  return [
    fmtInt(c.n),
    c.pattern,
    c.partitions === null ? '–' : String(c.partitions),
    c.default ? `${fmtInt(c.default.qps)} (${c.default.recall.toFixed(3)})` : '–',
    point(at95!.sable),
    point(at95!.peer, true),
    ratio(at95!),
    point(at99!.sable),
    point(at99!.peer, true),
    ratio(at99!),
    `${fmtMB(c.anonSettledBytes)} / ${fmtMB(c.peerRssSettled?.bytes ?? null)}`,
    verdict(c, plan),
  ];
}

function renderConsole(r: MatrixReport): string {
  const [t95, t99] = r.plan.bar.ratios;
  const head = ['set', 'rows', 'pattern', 'parts', 'default', `sable@${t95!.recall}`, `peer@${t95!.recall}`, '×', `sable@${t99!.recall}`, `peer@${t99!.recall}`, '×', 'anon MB', 'bar'];
  const rows = r.cells.map((c) => [c.set, ...cellRow(c, r.plan)].map((x) => x.replace(/\*\*/g, '')));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((x, i) => x.padEnd(widths[i]!)).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:ann:matrix failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
