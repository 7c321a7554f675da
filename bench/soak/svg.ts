// soak.svg, written by hand: two panels over the same time axis. Top: p50 (dashed) and p99
// (solid) latency per operation and bucket, log scale. Bottom: the service's RSS (a sample a
// second) with its anonymous and file-mapped parts, the dataset's own memory (GET /stats), the
// least-squares line through RSS after warm-up, and the dataset's partition count on a right
// axis (what a growing RSS usually follows). The warm-up is shaded in both.
import { OPS, type OpKind } from './config.js';
import type { SoakResult } from './harness.js';

const COLORS: Record<OpKind, string> = { search: '#1f77b4', upsert: '#d62728', delete: '#ff7f0e', read: '#2ca02c', status: '#9467bd' };
const num = (x: number) => (Math.round(x * 10) / 10).toString();
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A round step giving about `want` ticks over `span`. */
function niceStep(span: number, want: number): number {
  const raw = span / Math.max(1, want);
  const e = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * e).find((s) => s >= raw) ?? 10 * e;
}

function fmtMs(v: number): string {
  return v >= 1 ? String(Math.round(v)) : String(Number(v.toPrecision(1)));
}

export function renderSvg(r: SoakResult): string {
  const W = 960;
  const m = { l: 66, r: 66, t: 58, b: 40 };
  const ph = 300;
  const gap = 70;
  const legendH = 60;
  const H = m.t + ph + gap + ph + m.b + legendH;
  const x0 = m.l;
  const x1 = W - m.r;
  const T = Math.max(r.options.seconds, r.seconds);
  const X = (t: number) => x0 + (t / T) * (x1 - x0);
  const warm = r.rss.warmupSeconds;
  const P: string[] = [];
  P.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  P.push('<rect width="100%" height="100%" fill="#ffffff"/>');
  P.push(
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${esc(
      `Soak: ${r.options.clients} clients, ${r.data.n.toLocaleString('en-US')} × ${r.data.dim}, ${Math.round(r.seconds)} s (${r.options.mode} mode), commit ${r.commit}`,
    )}</text>`,
  );
  const xStep = niceStep(T, 10);
  const xAxis = (top: number, bottom: number) => {
    for (let t = 0; t <= T + 1e-9; t += xStep) {
      P.push(`<line x1="${num(X(t))}" y1="${top}" x2="${num(X(t))}" y2="${bottom}" stroke="#eee"/>`);
      P.push(`<text x="${num(X(t))}" y="${bottom + 14}" text-anchor="middle" font-size="10">${t}</text>`);
    }
    P.push(`<text x="${(x0 + x1) / 2}" y="${bottom + 30}" text-anchor="middle">time since the load started (s)</text>`);
    P.push(`<rect x="${x0}" y="${top}" width="${num(X(warm) - x0)}" height="${bottom - top}" fill="#000" opacity="0.05"/>`);
    P.push(`<text x="${num(x0 + 4)}" y="${top + 12}" fill="#777" font-size="10">warm-up</text>`);
    P.push(`<rect x="${x0}" y="${top}" width="${x1 - x0}" height="${bottom - top}" fill="none" stroke="#333"/>`);
  };

  // Top: latency.
  {
    const top = m.t;
    const bottom = m.t + ph;
    P.push(`<text x="${x0}" y="${top - 8}" font-weight="bold" font-size="12">Latency per operation: p99 solid, p50 dashed (ms, log scale)</text>`);
    const vals = r.buckets.flatMap((b) => OPS.flatMap((k) => [b.ops[k].p50, b.ops[k].p99])).filter((v) => Number.isFinite(v) && v > 0);
    const lo = Math.floor(Math.log10(vals.length ? Math.min(...vals) : 0.1));
    const hi = Math.max(lo + 1, Math.ceil(Math.log10(vals.length ? Math.max(...vals) : 10)));
    const Y = (v: number) => bottom - ((Math.log10(v) - lo) / (hi - lo)) * (bottom - top);
    for (let e = lo; e <= hi; e++) {
      for (const mult of [1, 2, 5]) {
        const v = mult * 10 ** e;
        if (Math.log10(v) > hi + 1e-9) continue;
        P.push(`<line x1="${x0}" y1="${num(Y(v))}" x2="${x1}" y2="${num(Y(v))}" stroke="${mult === 1 ? '#ddd' : '#f3f3f3'}"/>`);
        if (mult === 1 || hi - lo <= 3) P.push(`<text x="${x0 - 5}" y="${num(Y(v) + 4)}" text-anchor="end">${fmtMs(v)}</text>`);
      }
    }
    P.push(`<text transform="translate(${x0 - 46},${(top + bottom) / 2}) rotate(-90)" text-anchor="middle">latency (ms)</text>`);
    xAxis(top, bottom);
    P.push(`<clipPath id="clip-lat"><rect x="${x0}" y="${top}" width="${x1 - x0}" height="${bottom - top}"/></clipPath><g clip-path="url(#clip-lat)">`);
    for (const k of OPS) {
      for (const q of ['p50', 'p99'] as const) {
        const pts = r.buckets.filter((b) => Number.isFinite(b.ops[k][q]) && b.ops[k][q] > 0).map((b) => [X((b.from + b.to) / 2), Y(b.ops[k][q])] as const);
        if (pts.length === 0) continue;
        const d = pts.map(([x, y], i) => `${i ? 'L' : 'M'}${num(x)} ${num(y)}`).join('');
        P.push(`<path d="${d}" fill="none" stroke="${COLORS[k]}" stroke-width="${q === 'p99' ? 1.8 : 1.2}"${q === 'p50' ? ' stroke-dasharray="5 3"' : ''}/>`);
        if (q === 'p99') for (const [x, y] of pts) P.push(`<circle cx="${num(x)}" cy="${num(y)}" r="2.2" fill="${COLORS[k]}"/>`);
      }
    }
    // Buckets with errors: a red mark on the time axis.
    for (const b of r.buckets) {
      const e = OPS.reduce((s, k) => s + b.ops[k].errors, 0);
      if (e > 0) P.push(`<rect x="${num(X(b.from))}" y="${bottom - 6}" width="${num(X(b.to) - X(b.from))}" height="6" fill="#d62728"><title>${e} errors</title></rect>`);
    }
    P.push('</g>');
  }

  // Bottom: RSS and partitions.
  {
    const top = m.t + ph + gap;
    const bottom = top + ph;
    P.push(`<text x="${x0}" y="${top - 8}" font-weight="bold" font-size="12">${esc(`Service memory (MB, a sample a second; RSS slope after warm-up ${r.rss.slopeMBPerMin >= 0 ? '+' : ''}${r.rss.slopeMBPerMin.toFixed(2)} MB/min, ${r.rss.flat ? 'flat' : 'growing'}) and partitions`)}</text>`);
    const rs = r.samples.filter((s) => Number.isFinite(s.rssMB));
    const dataMem = r.buckets.filter((b) => b.dataset).map((b) => ({ t: b.to, mb: b.dataset!.memory_bytes / 2 ** 20 }));
    const all = [...rs.flatMap((s) => [s.rssMB, s.anonMB, s.fileMB]), ...dataMem.map((d) => d.mb)].filter(Number.isFinite);
    const lo0 = all.length ? Math.min(...all) : 0;
    const hi0 = all.length ? Math.max(...all) : 1;
    const step = niceStep(Math.max(hi0 - lo0, 20), 6);
    const lo = Math.floor(lo0 / step) * step;
    const hi = Math.max(lo + step, Math.ceil(hi0 / step) * step);
    const Y = (v: number) => bottom - ((v - lo) / (hi - lo)) * (bottom - top);
    for (let v = lo; v <= hi + 1e-9; v += step) {
      P.push(`<line x1="${x0}" y1="${num(Y(v))}" x2="${x1}" y2="${num(Y(v))}" stroke="#eee"/>`);
      P.push(`<text x="${x0 - 5}" y="${num(Y(v) + 4)}" text-anchor="end">${Math.round(v)}</text>`);
    }
    P.push(`<text transform="translate(${x0 - 46},${(top + bottom) / 2}) rotate(-90)" text-anchor="middle">memory (MB)</text>`);
    xAxis(top, bottom);
    const parts = r.buckets.filter((b) => b.dataset).map((b) => ({ t: b.to, p: b.dataset!.partitions }));
    const pMax = Math.max(2, ...parts.map((x) => x.p));
    const pStep = niceStep(pMax, 5);
    const pHi = Math.ceil(pMax / pStep) * pStep;
    const YP = (p: number) => bottom - (p / pHi) * (bottom - top);
    for (let p = 0; p <= pHi + 1e-9; p += pStep) P.push(`<text x="${x1 + 5}" y="${num(YP(p) + 4)}" fill="#777">${p}</text>`);
    P.push(`<text transform="translate(${x1 + 40},${(top + bottom) / 2}) rotate(90)" text-anchor="middle" fill="#777">partitions of the dataset</text>`);
    P.push(`<clipPath id="clip-rss"><rect x="${x0}" y="${top}" width="${x1 - x0}" height="${bottom - top}"/></clipPath><g clip-path="url(#clip-rss)">`);
    if (parts.length) {
      const d = parts.map((x, i) => `${i ? 'L' : 'M'}${num(X(x.t))} ${num(YP(x.p))}`).join('');
      P.push(`<path d="${d}" fill="none" stroke="#999" stroke-width="1.4" stroke-dasharray="2 2"/>`);
    }
    const line = (pts: { t: number; v: number }[], color: string, width: number) => {
      const ok = pts.filter((p) => Number.isFinite(p.v));
      if (ok.length) P.push(`<path d="${ok.map((p, i) => `${i ? 'L' : 'M'}${num(X(p.t))} ${num(Y(p.v))}`).join('')}" fill="none" stroke="${color}" stroke-width="${width}"/>`);
    };
    line(rs.map((s) => ({ t: s.t, v: s.fileMB })), '#8c564b', 1);
    line(rs.map((s) => ({ t: s.t, v: s.anonMB })), '#17becf', 1.2);
    line(dataMem.map((d) => ({ t: d.t, v: d.mb })), '#2ca02c', 1.4);
    for (const d of dataMem) P.push(`<circle cx="${num(X(d.t))}" cy="${num(Y(d.mb))}" r="2" fill="#2ca02c"/>`);
    line(rs.map((s) => ({ t: s.t, v: s.rssMB })), '#1f77b4', 1.6);
    const f = r.rss.fit;
    if (Number.isFinite(f.slope)) {
      const ta = warm;
      const tb = rs.at(-1)?.t ?? T;
      P.push(`<line x1="${num(X(ta))}" y1="${num(Y(f.intercept + f.slope * ta))}" x2="${num(X(tb))}" y2="${num(Y(f.intercept + f.slope * tb))}" stroke="#d62728" stroke-width="1.6" stroke-dasharray="6 3"/>`);
    }
    P.push('</g>');
  }

  // Legend.
  const ly = H - legendH + 14;
  OPS.forEach((k, i) => {
    const x = x0 + i * 120;
    P.push(`<line x1="${x}" y1="${ly}" x2="${x + 24}" y2="${ly}" stroke="${COLORS[k]}" stroke-width="2"/>`);
    P.push(`<text x="${x + 30}" y="${ly + 4}">${k}</text>`);
  });
  const row = (items: [string, string, string][], x: number, y: number) => {
    for (const [c, dash, label] of items) {
      P.push(`<line x1="${x}" y1="${y}" x2="${x + 24}" y2="${y}" stroke="${c}" stroke-width="2"${dash}/>`);
      P.push(`<text x="${x + 30}" y="${y + 4}">${esc(label)}</text>`);
      x += 44 + label.length * 6.2;
    }
  };
  row(
    [
      ['#333', '', 'p99'],
      ['#333', ' stroke-dasharray="5 3"', 'p50'],
    ],
    x0 + OPS.length * 120,
    ly,
  );
  row(
    [
      ['#1f77b4', '', 'RSS'],
      ['#17becf', '', 'anonymous'],
      ['#8c564b', '', 'mapped files'],
      ['#2ca02c', '', 'dataset (GET /stats)'],
      ['#d62728', ' stroke-dasharray="6 3"', 'RSS fit after warm-up'],
      ['#999', ' stroke-dasharray="2 2"', 'partitions (right axis)'],
    ],
    x0,
    ly + 22,
  );
  P.push(`<text x="${W - 8}" y="${H - 6}" text-anchor="end" fill="#666">red marks on the latency axis: buckets with errors</text>`);
  P.push('</svg>');
  return `${P.join('\n')}\n`;
}
