/**
 * The SLA tuner over time: the nprobe it chose (solid, left scale) and the p99 it observed
 * (dashed, right scale), with the target p99 as a dotted line. The service keeps no history of
 * either, so the samples are the page's own readings of GET /datasets/{id}/sla.
 */
import { micros } from '../format.js';

export interface TunerSample {
  at: number;
  nprobe: number | null;
  p99Us: number | null;
}

const W = 960;
const H = 200;
const PAD = { left: 44, right: 56, top: 12, bottom: 24 };

export function TunerChart({ samples, targetUs }: { samples: TunerSample[]; targetUs: number }) {
  const last = samples[samples.length - 1];
  const summary = last
    ? `${samples.length} readings; latest nprobe ${last.nprobe ?? 'none'}, observed p99 ${micros(last.p99Us)}, target ${targetUs > 0 ? micros(targetUs) : 'none'}`
    : 'no readings yet';
  const nprobes = samples.flatMap((s) => (s.nprobe === null ? [] : [s.nprobe]));
  const p99s = samples.flatMap((s) => (s.p99Us === null ? [] : [s.p99Us]));
  const nMax = Math.max(1, ...nprobes);
  const pMax = Math.max(1, targetUs, ...p99s);
  const t0 = samples[0]?.at ?? 0;
  const span = Math.max(1, (last?.at ?? 0) - t0);
  const x = (at: number) => PAD.left + ((at - t0) / span) * (W - PAD.left - PAD.right);
  const y = (v: number, max: number) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
  const line = (pick: (s: TunerSample) => number | null, max: number) =>
    samples
      .filter((s) => pick(s) !== null)
      .map((s, i) => `${i === 0 ? 'M' : 'L'}${x(s.at).toFixed(1)},${y(pick(s)!, max).toFixed(1)}`)
      .join(' ');

  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`SLA tuner: ${summary}`}>
        <line class="axis" x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
        <text class="label" x={PAD.left - 6} y={PAD.top + 8} text-anchor="end">
          {nMax}
        </text>
        <text class="label" x={PAD.left - 6} y={H - PAD.bottom} text-anchor="end">
          0
        </text>
        <text class="label" x={W - PAD.right + 6} y={PAD.top + 8}>
          {micros(pMax)}
        </text>
        <text class="label" x={PAD.left} y={H - 6}>
          {samples.length > 1 ? `last ${Math.round(span / 1000)} s` : ''}
        </text>
        {targetUs > 0 && <line class="target" x1={PAD.left} x2={W - PAD.right} y1={y(targetUs, pMax)} y2={y(targetUs, pMax)} />}
        <path class="nprobe" d={line((s) => s.nprobe, nMax)} />
        <path class="p99" d={line((s) => s.p99Us, pMax)} />
      </svg>
      <figcaption class="small">
        <span class="key nprobe">nprobe</span> <span class="key p99">observed p99</span> {targetUs > 0 && <span class="key target">target p99</span>} · {summary}
      </figcaption>
    </figure>
  );
}
