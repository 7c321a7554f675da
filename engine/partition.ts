/**
 * One partition of a dataset: a native segment plus its lifecycle. `growing` takes writes and is
 * searched exactly or through the largest index's lists; `sealing` is frozen and being indexed
 * and snapshotted (or waits for a fold: `awaitingFold`); `sealed` is indexed and (in a durable
 * engine) has a snapshot file.
 */
import { native } from './native.js';

export type PartitionState = 'growing' | 'sealing' | 'sealed';

export class Partition {
  /** Time of the first row appended while growing (promotion by age). */
  firstWriteAt: number | null = null;
  /** While sealing: whether its index build has finished (the snapshot is written next). */
  built = false;
  /** Rows its index was trained on (see PartitionRecord.trainedRows); 0 until it is built. */
  trainedRows = 0;
  /**
   * Frozen, and left unbuilt for the compaction to fold into the largest index (partitions.ts,
   * sealOrFold); a compaction that does not take it seals it.
   */
  awaitingFold = false;

  constructor(
    readonly pid: number,
    readonly handle: number,
    public state: PartitionState,
  ) {}

  get rows(): number {
    return native.segmentStats(this.handle).rows;
  }
}

/**
 * Searches run on a runner's threads carry segment handles from their plan to the native call
 * (a batch's turn, a worker's queue); any other search hands them to the native side in the
 * turn it plans. A partition swapped out meanwhile is released once every runner search planned
 * before the swap has finished: at once when none is in flight. (A fixed grace of 30 s kept every
 * copy a burst of folds made: a 10k-row load in single rows held 36 MB of anonymous memory where
 * releasing at once held 14 MB.)
 */
export class SegmentRetirement {
  private generation = 0;
  /** Runner searches in flight, by the generation they were planned in. */
  private readonly inFlight = new Map<number, number>();
  private waiting: { generation: number; handle: number }[] = [];

  /** Call before planning a runner search; call what it returns once the search is done. */
  hold(): () => void {
    const g = this.generation;
    this.inFlight.set(g, (this.inFlight.get(g) ?? 0) + 1);
    return () => {
      const left = this.inFlight.get(g)! - 1;
      if (left > 0) this.inFlight.set(g, left);
      else this.inFlight.delete(g);
      this.sweep();
    };
  }

  /** Releases `handle` once the runner searches planned before this call have finished. */
  retire(handle: number): void {
    this.waiting.push({ generation: this.generation, handle });
    this.generation++;
    this.sweep();
  }

  private sweep(): void {
    if (this.waiting.length === 0) return;
    let oldest = Infinity;
    for (const g of this.inFlight.keys()) oldest = Math.min(oldest, g);
    const due = this.waiting.filter((w) => w.generation < oldest);
    if (due.length === 0) return;
    this.waiting = this.waiting.filter((w) => w.generation >= oldest);
    for (const w of due) native.segmentRelease(w.handle);
  }
}
