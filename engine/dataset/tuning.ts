/**
 * The IVF tuning in effect: what the caller set, else what the data gives. Until `nlist` is set
 * the lists follow the data (the native build's default for the rows an index holds), and the
 * nprobe range is the one the engine picks within (the SLA tuner's bounds).
 */
import { native } from '../native.js';
import { DEFAULT_SLA } from '../sla.js';
import type { SlaConfig, Tuning } from '../types.js';
import type { DatasetCore } from './core.js';

export interface TuningInEffect {
  /** Lists of the largest built index, else of the index the present rows would get (0: no lists). */
  nlist: number;
  nprobe_min: number;
  nprobe_max: number;
}

export function tuningInEffect(core: DatasetCore): TuningInEffect {
  // The SLA's bounds only: status() sorts the latency window for its percentiles, twice per
  // dataset read (4 % of the HTTP thread under the soak).
  return resolveTuning(core.manifest.tuning, core.manifest.tuning.nlist ?? listsInEffect(core), core.tuner.config ?? DEFAULT_SLA);
}

/** The values set, else the defaults for `lists` lists and the SLA's nprobe bounds. */
export function resolveTuning(set: Tuning, lists: number, sla: Pick<SlaConfig, 'min_nprobe' | 'max_nprobe_fraction'>): TuningInEffect {
  const nlist = set.nlist ?? lists;
  const nprobeMin = set.nprobe_min ?? sla.min_nprobe;
  const nprobeMax = set.nprobe_max ?? Math.floor((nlist * sla.max_nprobe_fraction) / 100);
  return { nlist, nprobe_min: nprobeMin, nprobe_max: Math.max(nprobeMin, nprobeMax) };
}

/** Whether the caller bounded the nprobe the engine picks (costs a stats read per search). */
export function hasNprobeBounds(core: DatasetCore): boolean {
  const t = core.manifest.tuning;
  return t.nprobe_min !== undefined || t.nprobe_max !== undefined;
}

/** An nprobe the engine picked (index default or tuner), held within the caller's bounds. */
export function boundNprobe(core: DatasetCore, nprobe: number): number {
  const t = core.manifest.tuning;
  let v = nprobe;
  if (t.nprobe_max !== undefined) v = Math.min(v, t.nprobe_max);
  if (t.nprobe_min !== undefined) v = Math.max(v, t.nprobe_min);
  return v;
}

function listsInEffect(core: DatasetCore): number {
  let largestRows = -1;
  let lists = 0;
  let rows = 0;
  for (const p of core.partitions) {
    const s = native.segmentStats(p.handle);
    rows += s.live;
    if (s.indexStatus === 'ready' && s.nlist > 0 && s.rows > largestRows) {
      largestRows = s.rows;
      lists = s.nlist;
    }
  }
  return largestRows >= 0 ? lists : native.indexListsFor(core.manifest.indexType, rows, core.dim);
}
