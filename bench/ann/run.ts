// `npm run bench:ann [-- --full | --only=... | --help]`: sable's index types against hnswlib-node,
// usearch and FAISS on GloVe-100, MNIST-784 and a synthetic clustered 768-d set (and on request
// debian-minilm, MiniLM embeddings of Debian documentation sentences), in one run.
// Writes bench/results/ann.md, ann.svg and ann.json; prints the commit and the ISA in use.
//
// Every (library, set, build) runs in its own child process (child.ts) one after another, so
// memory figures are per library and the timings do not overlap.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { parseArgs, type HnswBuild, type LibName, type Plan, type SetName } from './config.js';
import { prepareSet } from './datasets.js';
import { blasInUse, cpuInfo, ensureFaiss, ensureGroundTruthTool, ensureHnswlib, ensureLancedb, ensureUsearch, gitCommit, type PeerSetup } from './env.js';
import { ensureGroundTruth } from './groundtruth.js';
import { packageVersion } from './libs/hnswlib.js';
import { type ChildTask, type LibRun } from './libs/types.js';
import { usearchIsa } from './libs/usearch.js';
import { HNSW_SQ, LANCEDB_PREFIX, LANCEDB_VERSION } from './libs/lancedb.js';
import { ensureDir, paths } from './paths.js';
import { renderConsoleSummary, renderMarkdown, skipLine, type RunReport, type SetInfo } from './report.js';
import { renderSvg } from './svg.js';
import { runChild } from './spawn-child.js';

const HNSW_LIBS: readonly LibName[] = ['hnswlib', 'usearch', 'faiss-hnsw', 'sable-hnsw'];

function sweepFor(lib: LibName, plan: Plan, nlist: number): number[] {
  if (HNSW_LIBS.includes(lib)) return plan.efSweep;
  if (lib === 'faiss-ivf' || lib === 'sable-ivf') return plan.nprobeSweep.filter((v) => v <= nlist);
  if (lib === 'sable') return plan.nprobeSweep;
  // LanceDB answers a few hundred queries a second: its sweep starts where recall is in reach.
  if (lib === 'lancedb') return plan.nprobeSweep.filter((v) => v >= 8);
  // Its guidance keeps the search-time ef at or below efConstruction.
  if (lib === 'lancedb-hnsw') return plan.efSweep.filter((v) => v <= HNSW_SQ.efConstruction);
  return [];
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const load0 = loadavg()[0]!;
  const plan = parseArgs(process.argv.slice(2));
  if (plan.renderFrom) {
    const report = JSON.parse(readFileSync(plan.renderFrom, 'utf8')) as RunReport;
    const outDir = plan.outDir ?? dirname(plan.renderFrom);
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'ann.md'), renderMarkdown(report));
    writeFileSync(join(outDir, 'ann.svg'), renderSvg(report));
    process.stdout.write(`${renderConsoleSummary(report)}\nre-rendered ${outDir}/ann.md and ann.svg\n`);
    return;
  }
  const commit = gitCommit();
  const cpu = cpuInfo();
  process.stderr.write(
    `ANN benchmark, ${plan.mode} mode; commit ${commit}; ${cpu.model} (${cpus().length} cores; ${cpu.simd.join(' ')}); Node ${process.version}\n` +
      `sets: ${plan.sets.map((s) => `${s}≤${plan.sizes[s]}`).join(', ')}; ${plan.queries} queries; k=${plan.k}; libraries: ${plan.libs.join(', ')}\n`,
  );

  // Peers that need a build step.
  const skipped: RunReport['skipped'] = [];
  let libs = [...plan.libs];
  const drop = (pred: (l: LibName) => boolean, reason: string) => {
    for (const l of libs.filter(pred)) skipped.push({ lib: l, reason });
    libs = libs.filter((l) => !pred(l));
  };
  // hnswlib-node and usearch: loaded once in a probe process of this Node; (re)built for it when
  // they do not load (another ABI, no binary), skipped with the reason when that fails too.
  const peerNotes: string[] = [];
  const peer = (names: LibName[], setup: () => PeerSetup) => {
    if (!libs.some((l) => names.includes(l))) return;
    const s = setup();
    peerNotes.push(...s.notes);
    if (s.skip) drop((l) => names.includes(l), s.skip);
  };
  peer(['hnswlib'], () => ensureHnswlib(plan.rebuildPeers));
  peer(['usearch'], () => ensureUsearch());
  peer(['lancedb', 'lancedb-hnsw'], () => ensureLancedb(LANCEDB_PREFIX, LANCEDB_VERSION));
  if (libs.some((l) => l.startsWith('faiss-'))) {
    const why = ensureFaiss(plan.installFaiss);
    if (why) drop((l) => l.startsWith('faiss-'), why);
  }
  const tmpDir = ensureDir(paths.tmp);

  // Data and ground truth.
  const gtTool = ensureGroundTruthTool();
  const setInfo: Partial<Record<SetName, SetInfo>> = {};
  const gtFiles: Partial<Record<SetName, string>> = {};
  for (const set of plan.sets) {
    const meta = await prepareSet(set, plan.sizes[set], plan.queries, plan.limitSentences);
    const n = Math.min(plan.sizes[set], meta.count);
    const g0 = Date.now();
    const { file, cached } = await ensureGroundTruth(set, n, plan.queries, plan.k, plan.selectivities, Math.min(2, cpus().length), gtTool);
    gtFiles[set] = file;
    setInfo[set] = { meta, n, nq: plan.queries, gtSeconds: cached ? null : (Date.now() - g0) / 1000 };
  }

  // The runs.
  const runs: LibRun[] = [];
  const timeoutMs = plan.mode === 'full' ? 3 * 3600_000 : 600_000;
  for (const set of plan.sets) {
    const info = setInfo[set]!;
    const nlist = plan.nlist(info.n);
    for (const lib of libs) {
      const builds: HnswBuild[] = HNSW_LIBS.includes(lib) ? plan.hnswBuilds : [plan.hnswBuilds[0]!];
      for (const hnsw of builds) {
        const task: ChildTask = {
          lib,
          set,
          n: info.n,
          nq: plan.queries,
          k: plan.k,
          gtFile: gtFiles[set]!,
          hnsw,
          nlist,
          sweep: sweepFor(lib, plan, nlist),
          stopRecall: plan.stopRecall,
          // A pass of LanceDB takes seconds at any setting: the quick bound would stop it at once.
          maxSecondsPerSetting: lib.startsWith('lancedb') ? Math.max(plan.maxSecondsPerSetting, 30) : plan.maxSecondsPerSetting,
          selectivities: plan.selectivities,
          recallTarget: plan.recallTarget,
          filteredTwoThreads: plan.filteredTwoThreads,
          flatQueries: Number.isFinite(plan.flatQueries) ? plan.flatQueries : plan.queries,
          tmpDir,
          keepTmp: plan.keepTmp,
        };
        const c0 = Date.now();
        const run = await runChild(task, timeoutMs);
        process.stderr.write(`[run] ${lib}/${set} ${run.build}: ${run.error ? `error: ${run.error}` : `${run.points.length} settings`} in ${((Date.now() - c0) / 1000).toFixed(0)} s\n`);
        runs.push(run);
      }
    }
  }

  const sableRun = runs.find((r) => r.lib.startsWith('sable') && r.isa);
  const faissRun = runs.find((r) => r.lib.startsWith('faiss-') && r.isa);
  const report: RunReport = {
    mode: plan.mode,
    startedAt: new Date(t0).toISOString(),
    seconds: (Date.now() - t0) / 1000,
    commit,
    cpu,
    node: process.version,
    load: [load0, loadavg()[0]!],
    isa: {
      sable: sableRun?.isa ?? null,
      usearch: libs.includes('usearch') ? (usearchIsa() ?? null) : null,
      faiss: faissRun?.isa ?? null,
      blas: libs.some((l) => l.startsWith('faiss-')) ? blasInUse() : null,
    },
    versions: {
      'hnswlib-node': packageVersion('hnswlib-node'),
      usearch: packageVersion('usearch'),
      '@lancedb/lancedb': LANCEDB_VERSION,
      faiss: 'libfaiss-dev 1.7.3 (Debian 12)',
    },
    k: plan.k,
    recallTarget: plan.recallTarget,
    sets: setInfo,
    runs,
    skipped,
    peerNotes,
    command: `npm run bench:ann${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  };
  const outDir = plan.outDir ?? paths.results;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'ann.json'), `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(join(outDir, 'ann.md'), renderMarkdown(report));
  writeFileSync(join(outDir, 'ann.svg'), renderSvg(report));

  process.stdout.write(`\n${renderConsoleSummary(report)}\n\n`);
  process.stdout.write(`commit: ${commit}\n`);
  process.stdout.write(`ISA: sable kernels ${report.isa.sable ?? '(sable not run)'}; CPU ${cpu.simd.join(' ')}; usearch (available) ${report.isa.usearch ?? '–'}; FAISS ${report.isa.faiss ?? '–'} with ${report.isa.blas ?? '–'}\n`);
  for (const n of peerNotes) process.stdout.write(`peer set-up: ${n}\n`);
  for (const s of skipped) process.stdout.write(`${skipLine(s)}\n`);
  process.stdout.write(`wrote ${join(outDir, 'ann.md')}, ann.svg, ann.json in ${((Date.now() - t0) / 60000).toFixed(1)} min\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:ann failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
