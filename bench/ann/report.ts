// bench/results/ann.md: the summary (best one-thread QPS at recall@10 >= target per set and
// library, and sable / best peer), then per set the builds, the sweeps and sable's filtered cases.
// Its tables and number formats serve bench:ann:matrix's report too (matrix.ts).
import type { LibName, SetName } from './config.js';
import { SABLE_LIBS } from './config.js';
import type { SetMeta } from './datasets.js';
import type { LibRun, SweepPoint } from './libs/types.js';

export interface SetInfo {
  meta: SetMeta;
  n: number;
  nq: number;
  gtSeconds: number | null;
}

export interface RunReport {
  mode: 'quick' | 'full';
  startedAt: string;
  seconds: number;
  commit: string;
  cpu: { model: string; cores: number; simd: string[] };
  node: string;
  isa: { sable: string | null; usearch: string | null; faiss: string | null; blas: string | null };
  /** 1-minute load average at the start and the end (the machine may be shared). */
  load?: [number, number];
  versions: Record<string, string>;
  k: number;
  recallTarget: number;
  sets: Partial<Record<SetName, SetInfo>>;
  runs: LibRun[];
  skipped: { lib: string; reason: string }[];
  /** How the peers' native addons were found or built for this Node (absent in older reports). */
  peerNotes?: string[];
  command: string;
}

/** One line for a library left out: the peers' set-up reasons already say "<peer> skipped ...". */
export function skipLine(s: { lib: string; reason: string }): string {
  return /^\S+ skipped\b/.test(s.reason) ? s.reason : `not measured: ${s.lib}: ${s.reason}`;
}

export const isSable = (lib: LibName) => (SABLE_LIBS as readonly string[]).includes(lib);

/** Series label: the library, plus its build when the library ran with several builds. */
export function seriesName(run: LibRun, all: LibRun[]): string {
  const builds = new Set(all.filter((r) => r.lib === run.lib && r.set === run.set).map((r) => r.build));
  return builds.size > 1 ? `${run.lib} (${run.build})` : run.lib;
}

export function bestAtTarget(run: LibRun, target: number): SweepPoint | null {
  let best: SweepPoint | null = null;
  for (const p of run.points) if (p.recall >= target && (!best || p.qps1 > best.qps1)) best = p;
  return best;
}

export const fmtInt = (x: number) => Math.round(x).toLocaleString('en-US');
export const fmtQps = (x: number | null) => (x === null || !Number.isFinite(x) ? '–' : fmtInt(x));
export const fmtMB = (b: number | null) => (b === null || !Number.isFinite(b) ? '–' : (b / 2 ** 20).toFixed(b < 10 * 2 ** 20 ? 1 : 0));
export const fmtRecall = (r: number) => r.toFixed(4);
const fmtSet = (s: SetInfo) =>
  `${s.n.toLocaleString('en-US')} × ${s.meta.dim}, ${s.meta.metric}, ${s.nq} held-out queries`;

export function bestPeer(runs: LibRun[], set: SetName, target: number): { run: LibRun; point: SweepPoint } | null {
  let best: { run: LibRun; point: SweepPoint } | null = null;
  for (const r of runs) {
    if (r.set !== set || isSable(r.lib) || r.error) continue;
    const p = bestAtTarget(r, target);
    if (p && (!best || p.qps1 > best.point.qps1)) best = { run: r, point: p };
  }
  return best;
}

/** Best point at the target over every build of a library on a set. */
function bestOfLib(runs: LibRun[], lib: LibName, set: SetName, target: number): { run: LibRun; point: SweepPoint } | null {
  let best: { run: LibRun; point: SweepPoint } | null = null;
  for (const r of runs) {
    if (r.lib !== lib || r.set !== set || r.error) continue;
    const p = bestAtTarget(r, target);
    if (p && (!best || p.qps1 > best.point.qps1)) best = { run: r, point: p };
  }
  return best;
}

/** One row per library: its best one-thread QPS at the target on each set; then sable / best peer. */
export function summaryRows(report: RunReport): string[][] {
  const sets = Object.keys(report.sets) as SetName[];
  const libs = [...new Set(report.runs.map((r) => r.lib))];
  const rows: string[][] = [];
  for (const lib of libs) {
    const builds = [...new Set(report.runs.filter((r) => r.lib === lib).map((r) => r.build))];
    const buildInCell = builds.length > 1;
    const row = [lib, buildInCell ? 'see cells' : (builds[0] ?? '')];
    for (const set of sets) {
      const runs = report.runs.filter((r) => r.set === set && r.lib === lib);
      if (runs.length === 0) row.push('–');
      else if (runs.every((r) => r.error)) row.push('error');
      else {
        const best = bestOfLib(report.runs, lib, set, report.recallTarget);
        if (best) {
          row.push(`${fmtInt(best.point.qps1)} (${best.point.param}${buildInCell ? `, ${best.run.build}` : ''}, ${best.point.recall.toFixed(3)})`);
        } else {
          const max = Math.max(0, ...runs.flatMap((r) => r.points.map((x) => x.recall)));
          row.push(`recall < ${report.recallTarget} (max ${max.toFixed(3)})`);
        }
      }
    }
    rows.push(row);
  }
  for (const lib of SABLE_LIBS) {
    if (!report.runs.some((r) => r.lib === lib && !r.error)) continue;
    const row = [`**${lib} / best peer**`, ''];
    for (const set of sets) {
      const peer = bestPeer(report.runs, set, report.recallTarget);
      const mine = bestOfLib(report.runs, lib, set, report.recallTarget);
      row.push(peer && mine ? `**${(mine.point.qps1 / peer.point.qps1).toFixed(2)}×** (vs ${peer.run.lib})` : '–');
    }
    rows.push(row);
  }
  return rows;
}

export function table(head: string[], rows: string[][], align?: ('l' | 'r')[]): string {
  const sep = head.map((_, i) => ((align?.[i] ?? 'l') === 'r' ? '---:' : '---'));
  return [head, sep, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

export function renderMarkdown(report: RunReport): string {
  const sets = Object.keys(report.sets) as SetName[];
  const out: string[] = [];
  const t = report.recallTarget;
  out.push(`# ANN benchmark (${report.mode} mode)`);
  out.push('');
  out.push(`Generated by \`${report.command}\` on ${report.startedAt} in ${(report.seconds / 60).toFixed(1)} min.`);
  out.push('');
  out.push(`- commit: \`${report.commit}\``);
  out.push(`- CPU: ${report.cpu.model}, ${report.cpu.cores} cores; SIMD: ${report.cpu.simd.join(', ') || 'unknown'}`);
  out.push(`- sable kernel ISA: **${report.isa.sable ?? 'not measured'}**; usearch targets available: ${report.isa.usearch ?? '–'}; FAISS: ${report.isa.faiss ?? '–'}, BLAS ${report.isa.blas ?? '–'}`);
  if (report.load) out.push(`- load average (1 min) at start / end: ${report.load[0].toFixed(2)} / ${report.load[1].toFixed(2)} on ${report.cpu.cores} cores (above ~0.5 the machine was shared and the QPS figures are noisy)`);
  out.push(`- Node ${report.node}; ${Object.entries(report.versions).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  for (const n of report.peerNotes ?? []) out.push(`- peer set-up: ${n}`);
  for (const s of report.skipped) out.push(`- ${skipLine(s)}`);
  out.push('');
  out.push(
    `recall@${report.k}: fraction of the true ${report.k} nearest neighbours returned (exact brute-force ground truth in double precision; a tie with the ${report.k}-th distance counts). ` +
      `QPS: all ${Object.values(report.sets)[0]?.nq ?? 1000} queries in one batch call per setting (searchBatch / search(batch) / FAISS search; hnswlib-node has no batch call, so a loop of searchKnn), best of up to 3 passes; ` +
      `"2T" is the same with two threads (hnswlib-node: two worker_threads each loading the saved index and answering half).`,
  );
  out.push('');
  out.push(`## Summary: best one-thread QPS at recall@${report.k} ≥ ${t}`);
  out.push('');
  out.push(`Cell: QPS (setting, recall). The ratio rows divide the sable index type's best QPS by the best peer's on that set.`);
  out.push('');
  out.push(table(['library', 'build', ...sets.map((s) => `${s} (${report.sets[s]!.n.toLocaleString('en-US')} × ${report.sets[s]!.meta.dim})`)], summaryRows(report)));
  out.push('');

  for (const set of sets) {
    const info = report.sets[set]!;
    const runs = report.runs.filter((r) => r.set === set);
    out.push(`## ${set}: ${fmtSet(info)}`);
    out.push('');
    out.push(`Source: ${info.meta.source}.`);
    out.push('');
    out.push('### Builds');
    out.push('');
    out.push(
      'Build time includes adding the vectors (sable: upserts with the metadata column, then flush). ' +
        'RSS Δ: growth of the process resident set over the build, after GC (FAISS: of the harness process); ' +
        'settled: the same after 6 s idle, once V8 has handed back the young generation the writes grew ' +
        '(the same wait for every library; FAISS: unchanged). ' +
        'Own size: the library\'s own figure (kind given).',
    );
    out.push('');
    out.push(
      table(
        ['library', 'version', 'build', 'build s', 'threads', 'RSS Δ MB', 'settled MB', 'own size MB', 'own size is', 'notes'],
        runs.map((r) => [
          r.lib,
          r.version || '–',
          r.build || '–',
          r.error ? '–' : r.buildSeconds.toFixed(1),
          r.error ? '–' : r.buildThreads === 0 ? 'engine' : String(r.buildThreads),
          fmtMB(r.rssBytes),
          fmtMB(r.rssSettledBytes),
          fmtMB(r.selfBytes),
          r.selfKind || '–',
          r.error ? `**error:** ${r.error}` : r.notes.join('; '),
        ]),
        ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
      ),
    );
    out.push('');
    out.push('### Recall / QPS sweeps');
    out.push('');
    const rows: string[][] = [];
    for (const r of runs) {
      if (r.error) continue;
      const best = bestAtTarget(r, t);
      for (const p of r.points) {
        rows.push([
          r.lib,
          r.build,
          p === best ? `**${p.param}**` : p.param,
          fmtRecall(p.recall),
          fmtQps(p.qps1),
          fmtQps(p.qps2),
          p.qps2 ? (p.qps2 / p.qps1).toFixed(2) : '–',
        ]);
      }
    }
    out.push(table(['library', 'build', 'setting', `recall@${report.k}`, 'QPS 1T', 'QPS 2T', '2T/1T'], rows, ['l', 'l', 'l', 'r', 'r', 'r', 'r']));
    out.push('');
    const filtered = runs.filter((r) => r.filtered.length > 0);
    if (filtered.length > 0) {
      out.push('### sable: filtered search (`advancedFilters: [{ field: "bucket", op: "lt", value: T }]`)');
      out.push('');
      out.push(
        `Each vector carries \`bucket\` uniform in [0, 1000); the filter keeps bucket < T. Recall against the exact filtered top-${report.k}; ` +
          `run at the cheapest swept setting reaching recall ${t} unfiltered. Where the planner went through the index, the last column ` +
          'times an exact scan of the same matches (`exact: true`, the alternative it weighed), one thread.',
      );
      out.push('');
      const frows: string[][] = [];
      for (const r of filtered)
        for (const f of r.filtered)
          frows.push([
            r.lib,
            r.build,
            `${(f.selectivity * 100).toFixed(1)}%`,
            f.matching.toLocaleString('en-US'),
            f.param,
            fmtRecall(f.recall),
            fmtQps(f.qps1),
            fmtQps(f.qps2),
            f.strategy ?? '–',
            f.qpsExact ? `${fmtQps(f.qpsExact)} (${(f.qps1 / f.qpsExact).toFixed(2)}x)` : '–',
          ]);
      out.push(
        table(
          ['library', 'build', 'selectivity', 'matching', 'setting', `recall@${report.k}`, 'QPS 1T', 'QPS 2T', 'strategy', 'exact scan QPS 1T (planner / exact)'],
          frows,
          ['l', 'l', 'r', 'r', 'l', 'r', 'r', 'r', 'l', 'r'],
        ),
      );
      out.push('');
    }
  }
  out.push('![recall vs QPS](ann.svg)');
  out.push('');
  return out.join('\n');
}

/** A compact plain-text summary for the terminal. */
export function renderConsoleSummary(report: RunReport): string {
  const sets = Object.keys(report.sets) as SetName[];
  const head = ['library', 'build', ...sets];
  const rows = summaryRows(report).map((r) => r.map((c) => c.replace(/\*\*/g, '')));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [`best one-thread QPS at recall@${report.k} >= ${report.recallTarget}:`, line(head), ...rows.map(line)].join('\n');
}
