// bench/results/ann.svg, written by hand: one panel per data set, recall@k on x, one-thread QPS
// on a log y axis, one curve per library (and build), the recall target as a dashed line.
import type { SetName } from './config.js';
import type { LibRun } from './libs/types.js';
import { isSable, seriesName, type RunReport } from './report.js';

const PALETTE: Record<string, string> = {
  sable: '#d62728',
  'sable-hnsw': '#ff7f0e',
  'sable-ivf': '#bcbd22',
  'sable-flat': '#8c564b',
  hnswlib: '#1f77b4',
  usearch: '#2ca02c',
  lancedb: '#e377c2',
  'lancedb-hnsw': '#393b79',
  'faiss-hnsw': '#9467bd',
  'faiss-ivf': '#17becf',
  'faiss-flat': '#7f7f7f',
};
const MARKERS = ['circle', 'square', 'diamond', 'triangle'] as const;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const num = (x: number) => (Math.round(x * 10) / 10).toString();

function marker(kind: (typeof MARKERS)[number], x: number, y: number, color: string): string {
  const r = 3.2;
  switch (kind) {
    case 'circle':
      return `<circle cx="${num(x)}" cy="${num(y)}" r="${r}" fill="${color}"/>`;
    case 'square':
      return `<rect x="${num(x - r)}" y="${num(y - r)}" width="${2 * r}" height="${2 * r}" fill="${color}"/>`;
    case 'diamond':
      return `<path d="M${num(x)} ${num(y - r - 1)}L${num(x + r + 1)} ${num(y)}L${num(x)} ${num(y + r + 1)}L${num(x - r - 1)} ${num(y)}Z" fill="${color}"/>`;
    case 'triangle':
      return `<path d="M${num(x)} ${num(y - r - 1)}L${num(x + r + 1)} ${num(y + r)}L${num(x - r - 1)} ${num(y + r)}Z" fill="${color}"/>`;
  }
}

function fmtQps(v: number): string {
  if (v >= 1e6) return `${v / 1e6}M`;
  if (v >= 1e3) return `${v / 1e3}k`;
  return String(v);
}

export function renderSvg(report: RunReport): string {
  const sets = Object.keys(report.sets) as SetName[];
  const runs = report.runs.filter((r) => !r.error && r.points.length > 0);
  const pw = 420;
  const ph = 330;
  const m = { l: 62, r: 16, t: 34, b: 46 };
  const series = [...new Set(runs.map((r) => seriesName(r, runs)))];
  const width = Math.max(860, Math.max(1, sets.length) * pw);
  const labelOf = (run: LibRun) => `${seriesName(run, runs)}${run.version ? ` ${run.version}` : ''}`;
  const colW = Math.max(230, 44 + 6.3 * Math.max(0, ...runs.map((r) => labelOf(r).length)));
  const legendCols = Math.max(1, Math.floor((width - m.l) / colW));
  const legendH = 22 + Math.ceil(series.length / legendCols) * 18;
  const height = ph + legendH + 48;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  parts.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  parts.push(
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">${esc(
      `Recall@${report.k} vs queries/s (one thread) — ${report.mode} mode, commit ${report.commit}`,
    )}</text>`,
  );
  const buildDash = (run: LibRun) => {
    const builds = [...new Set(runs.filter((r) => r.lib === run.lib && r.set === run.set).map((r) => r.build))];
    const i = builds.indexOf(run.build);
    return i <= 0 ? '' : ' stroke-dasharray="5 3"';
  };
  const markerOf = (run: LibRun) => {
    const builds = [...new Set(runs.filter((r) => r.lib === run.lib && r.set === run.set).map((r) => r.build))];
    return MARKERS[Math.max(0, builds.indexOf(run.build)) % MARKERS.length]!;
  };

  sets.forEach((set, si) => {
    const ox = si * pw;
    const oy = 24;
    const setRuns = runs.filter((r) => r.set === set);
    const pts = setRuns.flatMap((r) => r.points).filter((p) => Number.isFinite(p.qps1) && p.qps1 > 0);
    const info = report.sets[set]!;
    const x0 = m.l;
    const x1 = pw - m.r;
    const y0 = ph - m.b;
    const y1 = m.t;
    parts.push(`<g transform="translate(${ox},${oy})">`);
    parts.push(`<text x="${(x0 + x1) / 2}" y="${m.t - 12}" text-anchor="middle" font-size="12" font-weight="bold">${esc(`${set} (${info.n.toLocaleString('en-US')} × ${info.meta.dim}, ${info.meta.metric})`)}</text>`);
    parts.push(`<rect x="${x0}" y="${y1}" width="${x1 - x0}" height="${y0 - y1}" fill="none" stroke="#333"/>`);
    if (pts.length === 0) {
      parts.push(`<text x="${(x0 + x1) / 2}" y="${(y0 + y1) / 2}" text-anchor="middle" fill="#888">no results</text></g>`);
      return;
    }
    // x: recall on a "nines" scale, -log10(1 - recall), so 0.9 / 0.99 / 0.999 are evenly spaced;
    // 1 - recall is floored at one miss in the whole query set (recall 1 sits at the right edge).
    const floor = 1 / (info.nq * report.k);
    const nines = (r: number) => -Math.log10(Math.max(1 - r, floor));
    const minRecall = Math.min(...pts.map((p) => p.recall));
    const ticks = [0, 0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999].filter((t) => 1 - t > floor * 1.5);
    const firstTick = [...ticks].reverse().find((t) => t <= minRecall) ?? 0;
    const rx0 = nines(firstTick);
    const rx1 = nines(1) + 0.12; // room for the markers at recall 1
    const lq = pts.map((p) => Math.log10(p.qps1));
    const qy0 = Math.floor(Math.min(...lq));
    const qy1 = Math.max(qy0 + 1, Math.ceil(Math.max(...lq)));
    const X = (r: number) => x0 + ((nines(r) - rx0) / (rx1 - rx0)) * (x1 - x0);
    const Y = (q: number) => y0 - ((Math.log10(q) - qy0) / (qy1 - qy0)) * (y0 - y1);
    // Grid and axes.
    for (let e = qy0; e <= qy1; e++) {
      for (const mult of [1, 2, 5]) {
        const v = mult * 10 ** e;
        if (Math.log10(v) > qy1 + 1e-9) continue;
        const y = Y(v);
        parts.push(`<line x1="${x0}" y1="${num(y)}" x2="${x1}" y2="${num(y)}" stroke="${mult === 1 ? '#ddd' : '#f0f0f0'}"/>`);
        if (mult === 1 || qy1 - qy0 <= 2) parts.push(`<text x="${x0 - 5}" y="${num(y + 4)}" text-anchor="end">${fmtQps(v)}</text>`);
      }
    }
    for (const r of [...ticks.filter((t) => t >= firstTick), 1]) {
      const x = X(r);
      parts.push(`<line x1="${num(x)}" y1="${y1}" x2="${num(x)}" y2="${y0}" stroke="#eee"/>`);
      parts.push(`<text x="${num(x)}" y="${y0 + 15}" text-anchor="middle" font-size="10">${r === 1 ? '1' : String(r)}</text>`);
    }
    const tx = X(report.recallTarget);
    parts.push(`<line x1="${num(tx)}" y1="${y1}" x2="${num(tx)}" y2="${y0}" stroke="#d62728" stroke-dasharray="4 3" opacity="0.6"/>`);
    parts.push(`<text x="${x0 + (x1 - x0) / 2}" y="${y0 + 34}" text-anchor="middle">recall@${report.k} (scale: −log10(1 − recall))</text>`);
    parts.push(`<text transform="translate(${x0 - 46},${(y0 + y1) / 2}) rotate(-90)" text-anchor="middle">queries/s, one thread (log)</text>`);
    // Curves: points in sweep order; the engine's "default" point is drawn hollow, unconnected.
    parts.push(`<clipPath id="clip-${set}"><rect x="${x0}" y="${y1}" width="${x1 - x0}" height="${y0 - y1}"/></clipPath>`);
    parts.push(`<g clip-path="url(#clip-${set})">`);
    for (const run of setRuns) {
      const color = PALETTE[run.lib] ?? '#000';
      const swept = run.points.filter((p) => p.param !== 'default' && p.qps1 > 0);
      const width = isSable(run.lib) ? 2.2 : 1.5;
      if (swept.length > 1) {
        const d = swept.map((p, i) => `${i === 0 ? 'M' : 'L'}${num(X(p.recall))} ${num(Y(p.qps1))}`).join('');
        parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="${width}"${buildDash(run)}/>`);
      }
      for (const p of swept) parts.push(marker(markerOf(run), X(p.recall), Y(p.qps1), color));
      for (const p of run.points.filter((q) => q.param === 'default'))
        parts.push(`<circle cx="${num(X(p.recall))}" cy="${num(Y(p.qps1))}" r="4.5" fill="#fff" stroke="${color}" stroke-width="1.8"><title>${esc(`${run.lib} default: recall ${p.recall.toFixed(3)}, ${Math.round(p.qps1)} q/s`)}</title></circle>`);
    }
    parts.push('</g></g>');
  });

  // Legend.
  const ly = ph + 34;
  parts.push(`<text x="${m.l}" y="${ly}" font-weight="bold">Libraries</text>`);
  series.forEach((name, i) => {
    const run = runs.find((r) => seriesName(r, runs) === name)!;
    const color = PALETTE[run.lib] ?? '#000';
    const x = m.l + (i % legendCols) * colW;
    const y = ly + 16 + Math.floor(i / legendCols) * 18;
    parts.push(`<line x1="${x}" y1="${y - 4}" x2="${x + 26}" y2="${y - 4}" stroke="${color}" stroke-width="2"${buildDash(run)}/>`);
    parts.push(marker(markerOf(run), x + 13, y - 4, color));
    parts.push(`<text x="${x + 32}" y="${y}">${esc(labelOf(run))}</text>`);
  });
  parts.push(`<text x="${width - 8}" y="${height - 6}" text-anchor="end" fill="#666">hollow circle: sable's default setting (no nprobe/beamWidth given); dashed: second build setting</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
