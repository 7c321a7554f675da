/**
 * Runs on a pool thread: one native search over segment handles. The addon's segments live once
 * in process memory, so the worker reaches the same indexes as the main thread without a copy.
 */
import { searchShard, type NativeQueryOptions, type NativeResult } from '../engine/index.js';

export interface SearchTask {
  handles: number[];
  query: Float32Array;
  options: NativeQueryOptions;
}

export default function search(task: SearchTask): NativeResult {
  return searchShard(task.handles, task.query, task.options);
}
