/** A dataset's state in a word: provisioning, empty, ready (indexed or not yet), or building with its progress. */
import type { Dataset, Stats } from '../../../client/index.js';
import type { IndexStatus } from '../api.js';

export function DatasetStatus({ status, stats, index }: { status: Dataset['status']; stats: Stats | null; index: IndexStatus | null }) {
  if (status !== 'ready') return <span class="tag warn">provisioning</span>;
  if (!stats) return <span class="tag">ready</span>;
  if (stats.index_status === 'building') {
    const progress = index?.progress ?? 0;
    return (
      <span class="building">
        <span class="tag warn">building</span>
        <progress max={100} value={progress} aria-label="Index build progress">
          {progress} %
        </progress>
        <span class="small">{Math.round(progress)} %</span>
      </span>
    );
  }
  if (stats.vector_count === 0) return <span class="tag">empty</span>;
  return (
    <span>
      <span class="tag ok">ready</span>
      {stats.index_status === 'empty' && <span class="small muted"> no index yet</span>}
    </span>
  );
}

/** The index in words: `empty` means no partition is indexed yet, and searches scan the vectors. */
export function indexWords(stats: Stats, index: IndexStatus | null): string {
  if (stats.index_status === 'building') return `${stats.index_type}, building ${Math.round(index?.progress ?? 0)} %`;
  if (stats.index_status === 'empty') return `${stats.index_type}, not built yet (searches scan every vector)`;
  return `${stats.index_type}, built`;
}
