/**
 * The engine's public surface: everything outside engine/ imports from here, never from the
 * files behind it (a rule dependency-cruiser checks).
 */
import { native, type NativeParquetChunk, type NativeParquetChunkSpec } from './native.js';

export { Engine, type EngineOptions } from './engine.js';
export { Dataset } from './dataset/dataset.js';
export type { Matching } from './dataset/scan.js';
export type { UpsertOptions } from './dataset/writes.js';
export type { BulkLoad } from './dataset/bulk-load.js';
export { ShardPool, type ShardPoolOptions } from './threads/shard-pool.js';
export { resolveTuning, type TuningInEffect } from './dataset/tuning.js';
export { DEFAULT_SLA, nearestRank } from './sla.js';
export { SableError } from '../errors/codes.js';
export { LOCAL_MODEL, LocalEmbeddingModel, localModelDir, localTokenizer } from './embedding/local-model.js';
export type { WordPieceTokenizer } from './embedding/wordpiece.js';
export { tokenize } from './keyword/tokenize.js';
export { fuse, type FusedHit, type HybridCandidate } from './fusion.js';
export { BM25_B, BM25_K1, bm25Idf, bm25TermScore } from './keyword/bm25-formula.js';
export type { NativeQueryOptions, NativeResult } from './native.js';
export type { NativeParquetChunk, NativeParquetChunkSpec } from './native.js';
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

/**
 * Lowers the calling thread to background priority (nice +10 on Linux) for good: for worker
 * threads that do only background work (ingestion's parsers, bulk loads' decoders), so searches
 * take the CPU first when both want it.
 */
export function lowerThisThreadPriority(): void {
  native.lowerThreadPriority();
}

/** One Parquet column chunk decoded by the core (bulk/parquet/native-reader.ts reads files through it). */
export function decodeParquetChunk(chunk: Uint8Array, spec: NativeParquetChunkSpec): NativeParquetChunk {
  return native.parquetDecodeChunk(chunk, spec);
}
