import { native } from '../native.js';
import type { Partition } from '../partition.js';
import type { DatasetCore } from './core.js';

/**
 * Partitions without an index of their own (the growing one, frozen ones waiting for their
 * build) borrow the lists of the largest indexed one: their searches scan the rows of the lists
 * nearest each query instead of every row (native/core/index/coarse_lists.h). A bulk load's
 * gathered partition does not: nobody pays for its rows' assignment unless it is searched, and
 * its build comes when the load ends.
 */
export function shareLists(core: DatasetCore): void {
  let source: Partition | null = null;
  let sourceRows = 0;
  for (const p of core.partitions) {
    if (p.state !== 'sealed') continue;
    const rows = p.rows;
    if (rows > sourceRows) (source = p), (sourceRows = rows);
  }
  if (!source) return;
  for (const p of core.partitions) if (p.state !== 'sealed' && p !== core.gathered) native.segmentAdoptLists(p.handle, source.handle);
}
