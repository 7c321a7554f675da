// Percentiles from individual samples (nearest rank), never from averages.

/** Sorts `samples` (a copy) and returns the nearest-rank percentiles asked for. */
export function percentiles(samples: Float64Array, qs: number[]): number[] {
  if (samples.length === 0) return qs.map(() => NaN);
  const sorted = Float64Array.from(samples).sort();
  return qs.map((q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!);
}

export function mean(samples: ArrayLike<number>): number {
  if (samples.length === 0) return NaN;
  let s = 0;
  for (let i = 0; i < samples.length; i++) s += samples[i]!;
  return s / samples.length;
}
