/**
 * Group commit. Upserts and deletes of a dataset wait here; each turn of the dataset's writer
 * takes the waiting writes in arrival order, records them all in one LMDB transaction (one sync
 * to disk), and only once that commit is durable applies them to the segments, in order, and
 * acknowledges them. A write is never visible before it is durable, and concurrent writers share
 * a sync instead of queueing one sync each.
 *
 * A turn stops before a write that touches an id an earlier write of the turn touches: each
 * write's changes are planned from the segments as they are before the turn, which is only right
 * while no earlier write of the turn moves the same id. It also stops once the growing partition
 * would overflow, so a promotion comes between, and once its rows pass TRANSACTION_SLICE_BYTES of
 * values. The rest waits for the next turn.
 */
import type { DatasetCore, GroupedWrite, StagedWrite, WaitingWrite } from './core.js';
import { promoteLocked } from './partitions.js';

export type { GroupedWrite, StagedWrite, WaitingWrite } from './core.js';

/**
 * LMDB keeps every single page a write transaction dirtied on a free list for later
 * transactions, for as long as the store is open: one transaction of 120k rows of 384-d would
 * hold ~450 MB of anonymous memory for good, 256 concurrent upserts of 100 rows grouped into one
 * turn 11 MB. So a turn takes about this many bytes of values at most, and a larger upsert
 * commits in slices of this size (writes.ts).
 */
export const TRANSACTION_SLICE_BYTES = 2 << 20;

/**
 * A bulk load's slice (Dataset.upsert with `bulk`): a whole Parquet row group of 768-d vectors
 * commits at once. On a 1M x 768 load, 2 MB slices made 1,470 commits (each a sync) and every
 * commit copied the B-tree's rightmost pages out of the map, which the kernel's fault-around
 * widened to the neighbouring value pages just written: 450 MB of the file in the service's
 * RSS. 32 MB slices: 200 commits, 18% faster, 150 MB of the file (bench:bulk). The price is what
 * LMDB keeps of its largest transaction, about this much, for as long as the store is open.
 */
export const BULK_SLICE_BYTES = 32 << 20;

/** Queues a write for the dataset's next writer turn; resolves once it is durable and searchable. */
export function submitWrite(core: DatasetCore, write: GroupedWrite): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    core.waitingWrites.push({ ...write, resolve, reject });
    scheduleTurn(core);
  });
}

function scheduleTurn(core: DatasetCore): void {
  if (core.writeTurnQueued) return;
  core.writeTurnQueued = true;
  void core.exclusive(() => runTurn(core));
}

async function runTurn(core: DatasetCore): Promise<void> {
  core.writeTurnQueued = false;
  const turn = takeTurn(core);
  const staged: { write: WaitingWrite; plan: StagedWrite }[] = [];
  for (const write of turn) {
    try {
      staged.push({ write, plan: write.stage() });
    } catch (e) {
      write.reject(e);
    }
  }
  try {
    await core.storage.write(() => {
      for (const { plan } of staged) plan.record();
    });
  } catch (e) {
    for (const { write } of staged) write.reject(e);
    return;
  }
  const answers: (() => void)[] = [];
  for (const { write, plan } of staged) {
    try {
      const n = plan.apply();
      answers.push(() => write.resolve(n));
    } catch (e) {
      answers.push(() => write.reject(e));
    }
  }
  // Before the answers: a caller reading the dataset's state after its write sees the promotion.
  if (core.growing.rows >= core.manifest.promotion.max_buffer_vectors) {
    await promoteLocked(core).catch((e: Error) => core.fail(e));
  }
  for (const answer of answers) answer();
  if (core.waitingWrites.length > 0) scheduleTurn(core);
}

/**
 * The longest prefix of the waiting writes that touches no id twice, fits the growing partition
 * and stays within a transaction slice.
 */
function takeTurn(core: DatasetCore): WaitingWrite[] {
  const waiting = core.waitingWrites;
  const room = Math.min(core.manifest.promotion.max_buffer_vectors - core.growing.rows, Math.max(1, Math.floor(TRANSACTION_SLICE_BYTES / (core.dim * 4))));
  const touched = new Set<number>();
  let rows = 0;
  let taken = 0;
  for (; taken < waiting.length; taken++) {
    const write = waiting[taken]!;
    if (taken > 0 && (rows + write.rows > room || touchesAny(write.ids, touched))) break;
    for (let i = 0; i < write.ids.length; i++) touched.add(write.ids[i]!);
    rows += write.rows;
  }
  return waiting.splice(0, taken);
}

function touchesAny(ids: ArrayLike<number>, touched: Set<number>): boolean {
  for (let i = 0; i < ids.length; i++) if (touched.has(ids[i]!)) return true;
  return false;
}
