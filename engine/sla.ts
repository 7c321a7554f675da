/**
 * Per-dataset latency tracking and knob tuning toward a p99 target. Knobs move only when the
 * SLA is set: down (less recall, less latency) when the observed p99 is over target, back up
 * toward recall when there is clear headroom.
 */
import type { SlaConfig, SlaStatus } from './types.js';

const WINDOW = 1024;
const ADJUST_EVERY = 64;

export const DEFAULT_SLA: SlaConfig = {
  target_p99_us: 0,
  min_nprobe: 1,
  max_nprobe_fraction: 50,
  min_beam_width: 16,
  max_beam_width: 1024,
};

/** The nearest-rank percentile `q` of ascending values: how the tuner reads its p50 and p99. */
export function nearestRank(sorted: ArrayLike<number>, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export class SlaTuner {
  private readonly samples = new Float64Array(WINDOW);
  private count = 0;
  private sinceAdjust = 0;
  private nprobe: number | null = null;
  private beam: number | null = null;

  constructor(public config: SlaConfig | null) {}

  /** Whether knobs move (an SLA with a target is set). */
  get active(): boolean {
    return this.config !== null && this.config.target_p99_us > 0;
  }

  /** Knobs for the next search, given the index defaults; null fields mean "index default". */
  knobs(defaults: { nprobe: number; beamWidth: number; nlist: number }): { nprobe?: number; beamWidth?: number } {
    if (!this.config || this.config.target_p99_us <= 0) return {};
    if (this.nprobe === null && defaults.nprobe > 0) this.nprobe = this.clampNprobe(defaults.nprobe, defaults.nlist);
    if (this.beam === null && defaults.beamWidth > 0) this.beam = this.clampBeam(defaults.beamWidth);
    return { nprobe: this.nprobe ?? undefined, beamWidth: this.beam ?? undefined };
  }

  record(latencyUs: number, nlist: number): void {
    this.samples[this.count % WINDOW] = latencyUs;
    this.count++;
    if (!this.config || this.config.target_p99_us <= 0) return;
    if (++this.sinceAdjust < ADJUST_EVERY) return;
    this.sinceAdjust = 0;
    const p99 = this.percentile(0.99);
    if (p99 === null) return;
    const target = this.config.target_p99_us;
    let factor = 1;
    if (p99 > target) factor = Math.max(0.5, target / p99);
    else if (p99 < 0.7 * target) factor = 1.25;
    if (factor === 1) return;
    if (this.nprobe !== null) this.nprobe = this.clampNprobe(Math.round(this.nprobe * factor) || 1, nlist);
    if (this.beam !== null) this.beam = this.clampBeam(Math.round(this.beam * factor));
  }

  percentile(q: number): number | null {
    const n = Math.min(this.count, WINDOW);
    if (n === 0) return null;
    return nearestRank(Array.from(this.samples.subarray(0, n)).sort((a, b) => a - b), q);
  }

  status(): SlaStatus {
    return {
      ...(this.config ?? DEFAULT_SLA),
      observed_p50_us: this.percentile(0.5),
      observed_p99_us: this.percentile(0.99),
      current_nprobe: this.nprobe,
      current_beam_width: this.beam,
    };
  }

  reconfigure(config: SlaConfig): void {
    this.config = config;
    this.sinceAdjust = 0;
  }

  private clampNprobe(v: number, nlist: number): number {
    const c = this.config!;
    const max = nlist > 0 ? Math.max(c.min_nprobe, Math.floor((nlist * c.max_nprobe_fraction) / 100)) : v;
    return Math.min(Math.max(v, c.min_nprobe), max);
  }

  private clampBeam(v: number): number {
    const c = this.config!;
    return Math.min(Math.max(v, c.min_beam_width), c.max_beam_width);
  }
}
