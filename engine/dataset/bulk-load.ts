/**
 * Bulk loads (a Parquet job): while one runs, the dataset's index builds wait, and a sable
 * dataset gathers the partitions the load freezes into one partition (partitions.gather), built
 * once when the last load ends. Kept apart, each partition was built, and then all were folded
 * into one and trained again (compaction.ts): the fold held a copy of every row beside the
 * originals, and every row was trained on twice.
 */
import type { DatasetCore } from './core.js';
import { freezeGrowing, gather, sealGathered } from './partitions.js';

export interface BulkLoad {
  /** Rows the load will add (a file's footer read): the gathered partition reserves room for them. */
  expectRows(rows: number): void;
  /** The load is over (once; close() ends it too): builds resume, the gathered partition is built. */
  end(): void;
}

export function beginBulkLoad(core: DatasetCore): BulkLoad {
  core.checkOpen();
  core.bulkLoads++;
  const end = core.holdBuilds(() => {
    if (--core.bulkLoads === 0) core.track(endGathering(core));
  });
  return {
    expectRows: (rows) => {
      core.bulkRowsExpected += rows;
    },
    end,
  };
}

/**
 * The rows still growing join the gathered partition, after every copy under way, and it is
 * sealed. A load that froze no partition leaves its rows growing, as any write does.
 */
async function endGathering(core: DatasetCore): Promise<void> {
  core.bulkRowsExpected = 0;
  if (!core.gathered && core.gatherings.size === 0) return;
  await core.exclusive(async () => {
    const last = core.closing ? null : await freezeGrowing(core);
    // Not awaited here: its copy takes a writer turn of its own, after this one.
    if (last) core.track(gather(core, last));
  });
  await Promise.allSettled([...core.gatherings]);
  // A load begun meanwhile gathers into a partition of its own.
  if (core.bulkLoads === 0) await core.exclusive(async () => sealGathered(core));
}
