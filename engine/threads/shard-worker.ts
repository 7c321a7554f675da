/** Runs on a shard pool thread: one native search over some segments of a dataset. */
import { native, type NativeQueryOptions, type NativeResult } from '../native.js';

export interface ShardTask {
  handles: number[];
  query: Float32Array;
  options: NativeQueryOptions;
}

export default function searchShard(task: ShardTask): NativeResult {
  return native.search(task.handles, task.query, task.options);
}
