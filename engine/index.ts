/**
 * The engine's public surface: everything outside engine/ imports from here, never from the
 * files behind it (a rule dependency-cruiser checks).
 */
import { native, type NativeQueryOptions, type NativeResult } from './native.js';

export { Engine, type EngineOptions } from './engine.js';
export { Dataset, type SearchPlan } from './dataset/dataset.js';
export type { Matching } from './dataset/scan.js';
export { mergeShards, receiptOf } from './dataset/search.js';
export { resolveTuning, type TuningInEffect } from './dataset/tuning.js';
export { DEFAULT_SLA } from './sla.js';
export { SableError } from '../errors/codes.js';
export { LOCAL_MODEL, LocalEmbeddingModel, localModelDir, localTokenizer } from './embedding/local-model.js';
export type { WordPieceTokenizer } from './embedding/wordpiece.js';
export { tokenize } from './keyword/tokenize.js';
export type { NativeQueryOptions, NativeResult } from './native.js';
export * from './vocabulary.js';
export type * from './types.js';

/**
 * Reads the decimal numbers of the bracketed list at bytes[open] ('[', JSON's number grammar)
 * into a Float32Array, each the number rounded to a double and then to float32; null when the
 * list holds anything else or a number past the double range.
 */
export function readDecimalVector(bytes: Uint8Array, open: number): { values: Float32Array; end: number } | null {
  return native.readDecimalList(bytes, open);
}

/** Searches some segments of a dataset (a shard of its plan) on this thread: for worker threads. */
export function searchShard(handles: number[], query: Float32Array, options: NativeQueryOptions): NativeResult {
  return native.search(handles, query, options);
}

/**
 * Searches a dataset plan's segments for each query of a batch (n * dim values) in one task on
 * the libuv pool, one after the other: one thread wake-up for the batch.
 */
export function searchShardBatchAsync(handles: number[], queries: Float32Array, options: NativeQueryOptions): Promise<NativeResult[]> {
  return native.searchBatch(handles, queries, options, 1);
}

/** Searches a dataset plan's segments on the libuv pool (the cheapest way off the JS thread). */
export function searchShardAsync(handles: number[], query: Float32Array, options: NativeQueryOptions): Promise<NativeResult> {
  return native.searchAsync(handles, query, options);
}
