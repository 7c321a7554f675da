/**
 * One partition of a dataset: a native segment plus its lifecycle. `growing` takes writes and is
 * searched exactly; `sealing` is frozen and being indexed and snapshotted; `sealed` is indexed
 * and (in a durable engine) has a snapshot file.
 */
import { native } from './native.js';

export type PartitionState = 'growing' | 'sealing' | 'sealed';

/** Released segments stay open this long, so a search that already holds the handle finishes. */
const RELEASE_GRACE_MS = 30_000;

export class Partition {
  /** Time of the first row appended while growing (promotion by age). */
  firstWriteAt: number | null = null;
  /** While sealing: whether its index build has finished (the snapshot is written next). */
  built = false;
  /** Rows its index was trained on (see PartitionRecord.trainedRows); 0 until it is built. */
  trainedRows = 0;

  constructor(
    readonly pid: number,
    readonly handle: number,
    public state: PartitionState,
  ) {}

  get rows(): number {
    return native.segmentStats(this.handle).rows;
  }

  release(): void {
    const handle = this.handle;
    setTimeout(() => native.segmentRelease(handle), RELEASE_GRACE_MS).unref();
  }
}
