/**
 * recall@k against p99 latency as an SVG (hand-written, no dependency): the engine's search p99
 * (filled, labelled with nprobe) and the client's request p99 (hollow), on a log latency axis,
 * with the target and the chosen setting marked.
 */
import type { TuneResult } from './report.js';

const W = 680;
const H = 420;
const M = { left: 64, right: 24, top: 40, bottom: 56 };

export function plot(r: TuneResult, targetP99Us?: number): string {
  const pts = r.results.filter((s) => Number.isFinite(s.searchP99Us) && Number.isFinite(s.requestP99Ms));
  const lat = [...pts.flatMap((s) => [s.searchP99Us, s.requestP99Ms * 1000]), ...(targetP99Us ? [targetP99Us] : [])].filter((v) => v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...lat))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...lat) * 1.0001)));
  const minRecall = Math.max(0, Math.floor(Math.min(...pts.map((s) => s.recall), 0.95) * 20) / 20);
  const x = (us: number) => M.left + ((Math.log10(us) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (W - M.left - M.right);
  const y = (recall: number) => H - M.bottom - ((recall - minRecall) / (1 - minRecall || 1)) * (H - M.top - M.bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">${esc(r.dataset.name)}: recall@${r.k} against p99 latency, ${r.concurrency} clients</text>`,
  ];
  for (let d = lo; d <= hi; d *= 10) {
    out.push(`<line x1="${x(d)}" x2="${x(d)}" y1="${M.top}" y2="${H - M.bottom}" stroke="#ddd"/>`);
    out.push(`<text x="${x(d)}" y="${H - M.bottom + 16}" text-anchor="middle">${d >= 1000 ? `${d / 1000} ms` : `${d} µs`}</text>`);
  }
  for (let v = minRecall; v <= 1.0001; v += (1 - minRecall) / 5) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>`);
    out.push(`<text x="${M.left - 8}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}</text>`);
  }
  out.push(`<text x="${W / 2}" y="${H - 14}" text-anchor="middle">p99 latency (log scale)</text>`);
  out.push(`<text transform="translate(16 ${H / 2}) rotate(-90)" text-anchor="middle">recall@${r.k}</text>`);
  if (targetP99Us) {
    out.push(`<line x1="${x(targetP99Us)}" x2="${x(targetP99Us)}" y1="${M.top}" y2="${H - M.bottom}" stroke="#c33" stroke-dasharray="5 4"/>`);
    out.push(`<text x="${x(targetP99Us) + 4}" y="${M.top + 12}" fill="#c33">target ${targetP99Us >= 1000 ? `${targetP99Us / 1000} ms` : `${targetP99Us} µs`}</text>`);
  }
  const series = (pick: (s: (typeof pts)[number]) => number, style: string) =>
    `<polyline fill="none" ${style} points="${pts.filter((s) => s.nprobe !== null).map((s) => `${x(pick(s)).toFixed(1)},${y(s.recall).toFixed(1)}`).join(' ')}"/>`;
  out.push(series((s) => s.searchP99Us, 'stroke="#2563eb"'));
  out.push(series((s) => s.requestP99Ms * 1000, 'stroke="#9ca3af" stroke-dasharray="3 3"'));
  for (const [i, s] of pts.entries()) {
    const chosen = r.choice?.chosen === s;
    out.push(`<circle cx="${x(s.searchP99Us).toFixed(1)}" cy="${y(s.recall).toFixed(1)}" r="${chosen ? 6 : 4}" fill="#2563eb"${chosen ? ' stroke="#c33" stroke-width="3"' : ''}/>`);
    out.push(`<circle cx="${x(s.requestP99Ms * 1000).toFixed(1)}" cy="${y(s.recall).toFixed(1)}" r="4" fill="#fff" stroke="#6b7280"/>`);
    // Neighbours often share a recall (1.000): their labels alternate above and below.
    out.push(`<text x="${x(s.searchP99Us) + 6}" y="${y(s.recall) + (i % 2 === 0 ? -7 : 16)}" fill="#1e3a8a">${s.nprobe === null ? 'default' : s.nprobe}</text>`);
  }
  const lx = W - M.right - 230;
  const ly = H - M.bottom - 40;
  out.push(`<circle cx="${lx}" cy="${ly}" r="4" fill="#2563eb"/><text x="${lx + 10}" y="${ly + 4}">search p99 (engine; labels: nprobe)</text>`);
  out.push(`<circle cx="${lx}" cy="${ly + 18}" r="4" fill="#fff" stroke="#6b7280"/><text x="${lx + 10}" y="${ly + 22}">request p99 (client, over HTTP)</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}

function esc(s: string): string {
  return s.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
