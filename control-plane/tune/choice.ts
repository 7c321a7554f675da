/**
 * What `--apply --target-p99` sets: the setting of highest recall (then fewest lists) whose
 * search p99 met the target in the sweep, held as the SLA's floor (min_nprobe) under that target, so the engine's
 * tuner may move up when there is headroom but never below the recall that was measured.
 */
import type { Sla, SlaSettings } from '../../client/types.js';
import type { SettingResult } from './sweep.js';

export interface Choice {
  chosen: SettingResult | null;
  /** Why, in a sentence a user reads. */
  reason: string;
  sla: SlaSettings | null;
}

export function choose(results: SettingResult[], targetP99Us: number, nlist: number, current: Sla): Choice {
  const fits = results.filter((r) => r.nprobe !== null && r.errors === 0 && r.searchP99Us <= targetP99Us);
  if (fits.length === 0) {
    const fastest = results.filter((r) => r.nprobe !== null).sort((a, b) => a.searchP99Us - b.searchP99Us)[0];
    return {
      chosen: null,
      reason: `no setting met a search p99 of ${targetP99Us} µs (the fastest, nprobe ${fastest?.nprobe}, took ${fastest ? Math.round(fastest.searchP99Us) : '?'} µs); nothing was set`,
      sla: null,
    };
  }
  // Equal recall: the fewer lists, as they cost less by construction (a p99 measured on a busy
  // machine would pick by noise).
  const best = fits.sort((a, b) => b.recall - a.recall || a.nprobe! - b.nprobe!)[0]!;
  const fraction = Math.min(100, Math.max(current.max_nprobe_fraction, Math.ceil((100 * best.nprobe!) / Math.max(1, nlist))));
  return {
    chosen: best,
    reason:
      `nprobe ${best.nprobe} has the highest recall@k (${best.recall.toFixed(3)}) of the ${fits.length} settings whose search p99 ` +
      `(${Math.round(best.searchP99Us)} µs) met the target of ${targetP99Us} µs; it becomes the SLA's floor (min_nprobe) under that target`,
    sla: { target_p99_us: targetP99Us, min_nprobe: best.nprobe!, max_nprobe_fraction: fraction },
  };
}
