/**
 * The N-API addon: the only file that loads it, once per thread, with the error class injected
 * and its vocabulary (error codes, enumerations) checked against the TypeScript definitions.
 */
import { createRequire } from 'node:module';
import { isErrorCode, SableError } from '../errors/codes.js';
import { checkNativeVocabulary, type ColumnType, type PredicateOp } from './vocabulary.js';

export type { ColumnType } from './vocabulary.js';

export interface NativeReceiptPartition {
  strategy: string;
  rows: number;
  matches: number;
  candidates_scored: number;
  nprobe: number;
  beam_width: number;
  /** The index's calibrated recall@10 for the knobs used (1 for an exact scan; null: no estimate). */
  estimated_recall: number | null;
}

export interface NativeResult {
  ids: Float64Array;
  scores: Float32Array;
  /** What each partition (segment) did, in the order of the handles searched. */
  partitions: NativeReceiptPartition[];
  /** The kernel instruction set the search ran on. */
  isa: string;
}

/**
 * A batch's answers in columns (one object per query costs more than a small partition's search):
 * query q's hits are ids and scores from offsets[q] to offsets[q + 1]; its receipts, one per
 * handle searched, are RECEIPT_FIELDS numbers each from q * handles * RECEIPT_FIELDS (batchResult
 * reads one query's answer back as a NativeResult).
 */
export interface NativeBatch {
  ids: Float64Array;
  scores: Float32Array;
  offsets: Uint32Array;
  /** strategy (index into strategies), rows, matches, candidates_scored, nprobe, beam_width, estimated_recall (-1: none) */
  receipts: Float64Array;
  strategies: string[];
  isa: string;
}

const RECEIPT_FIELDS = 7;

/** Query q's answer of a batch over `handles` segments. */
export function batchResult(batch: NativeBatch, q: number, handles: number): NativeResult {
  const from = batch.offsets[q]!;
  const to = batch.offsets[q + 1]!;
  const partitions: NativeReceiptPartition[] = new Array(handles);
  const r = batch.receipts;
  for (let i = 0, f = q * handles * RECEIPT_FIELDS; i < handles; i++, f += RECEIPT_FIELDS) {
    partitions[i] = {
      strategy: batch.strategies[r[f]!]!,
      rows: r[f + 1]!,
      matches: r[f + 2]!,
      candidates_scored: r[f + 3]!,
      nprobe: r[f + 4]!,
      beam_width: r[f + 5]!,
      estimated_recall: r[f + 6]! < 0 ? null : r[f + 6]!,
    };
  }
  return { ids: batch.ids.subarray(from, to), scores: batch.scores.subarray(from, to), partitions, isa: batch.isa };
}

export interface NativePredicate {
  column: string;
  op: PredicateOp;
  values: number[];
}

export interface NativeQueryOptions {
  k: number;
  nprobe?: number;
  beamWidth?: number;
  rerankDepth?: number;
  exact?: boolean;
  /** The segments may hold the same id (partitions being gathered): each id answered once. */
  distinct?: boolean;
  predicates?: NativePredicate[];
}


export interface NativeColumnBatch {
  name: string;
  type: ColumnType;
  values: Uint32Array | Int32Array | BigInt64Array | Float32Array | Float64Array | Uint8Array;
  valid?: Uint8Array;
}

export interface NativeSegmentStats {
  rows: number;
  live: number;
  memoryBytes: number;
  sealed: boolean;
  indexType: string;
  indexStatus: 'none' | 'building' | 'ready';
  progress: number;
  nlist: number;
  defaultNprobe: number;
  defaultBeamWidth: number;
}

export interface NativeBuildOptions {
  nlist?: number;
  m?: number;
  efConstruction?: number;
  threads?: number;
}

/** What the footer says of one Parquet column chunk (native/core/parquet/column_chunk.h). */
export interface NativeParquetChunkSpec {
  /** Parquet's Type enum: BOOLEAN 0, INT32 1, INT64 2, FLOAT 4, DOUBLE 5, BYTE_ARRAY 6. */
  physicalType: number;
  /** Parquet's CompressionCodec enum: UNCOMPRESSED 0, SNAPPY 1, ZSTD 6. */
  codec: number;
  maxDefinitionLevel: number;
  maxRepetitionLevel: number;
  /** ColumnMetaData.num_values (level entries, nulls included). */
  numValues: number;
  /** ColumnMetaData.total_uncompressed_size. */
  uncompressedSize: number;
  typeLength: number;
  /** The most decoding the chunk may allocate, all buffers together. */
  limitBytes: number;
}

/** A decoded column chunk: the non-null values in order, and the levels (null when the max level is 0). */
export interface NativeParquetChunk {
  levels: number;
  count: number;
  /** Level entries that start a record (repetition level 0). */
  records: number;
  /** Level entries per record when every record has as many; else -1. */
  recordLength: number;
  /** FLOAT: the index of the first NaN or infinite value; else -1 (and for every other type). */
  firstNonFinite: number;
  /** BOOLEAN as one byte each; BYTE_ARRAY's bytes end to end (see offsets). */
  values: Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array;
  /** BYTE_ARRAY only: count + 1 offsets into values. */
  offsets: Int32Array | null;
  defLevels: Uint8Array | null;
  repLevels: Uint8Array | null;
}

export interface NativeAddon {
  setErrorClass(cls: new (code: never, message: string) => Error): void;
  /** Every error code the core can raise. */
  errorCodes(): string[];
  /** The names of the core's enumerations. */
  enumerations(): { metrics: string[]; indexTypes: string[]; columnTypes: string[]; predicateOps: string[] };
  activeIsa(): string;
  /** `reserveRows`: room for that many rows of a growing segment, reserved up front. */
  segmentCreate(dim: number, metric: string, reserveRows?: number): number;
  segmentRelease(handle: number): void;
  segmentAppend(handle: number, ids: Float64Array, vectors: Float32Array, columns?: NativeColumnBatch[]): void;
  segmentRemove(handle: number, ids: Float64Array): number;
  segmentContains(handle: number, ids: Float64Array): Uint8Array;
  /** Tombstones every live row whose id is not in `members`; `missing`: members with no live row. */
  segmentReconcile(handle: number, members: Float64Array): { removed: number; missing: number };
  segmentSeal(handle: number): void;
  /** Until `handle` has an index, its large searches scan the lists of `source`'s index nearest each query; whether it took them. */
  segmentAdoptLists(handle: number, source: number): boolean;
  /** Half-precision rows for a sealed segment that waits for a `sable` build (see segment.h). */
  segmentCompactRows(handle: number, indexType: string): Promise<boolean>;
  segmentMatch(handle: number, ids: Float64Array, options: { predicates?: NativePredicate[] }): Uint8Array;
  segmentScore(handle: number, ids: Float64Array, query: Float32Array): Float32Array;
  segmentRowIds(handle: number): Float64Array;
  segmentReplaceColumns(handle: number, columns: NativeColumnBatch[], rows: number): void;
  segmentColumnTypes(handle: number): Record<string, ColumnType>;
  /** Resolves true when a seed index (segmentExtend) took the rows it lacked, false when one was trained. */
  segmentBuild(handle: number, indexType: string, options: NativeBuildOptions): Promise<boolean>;
  segmentStats(handle: number): NativeSegmentStats;
  indexListsFor(indexType: string, rows: number, dim: number): number;
  readDecimalList(bytes: Uint8Array, open: number): { values: Float32Array; end: number } | null;
  /** The first row from `from` on with a non-finite value or a float32 sum of squares above `squaredLimit`; -1: none (suspect_rows.h). */
  firstSuspectRow(vectors: Float32Array, dim: number, from: number, squaredLimit: number): number;
  segmentLiveIds(handle: number): Float64Array;
  segmentAbsorb(target: number, source: number): Promise<void>;
  /** A new sealed segment of the live rows; its index kept when the index could drop rows (indexStatus 'ready'). */
  segmentLiveCopy(handle: number): Promise<number>;
  /** A sealed, unindexed segment of base's live rows, then the sources'; its build extends base's index when it can. */
  segmentExtend(base: number, sources: number[]): Promise<number>;
  /** Resolves with the snapshot's checksum (16 hex digits). */
  segmentSave(handle: number, path: string): Promise<string>;
  /** With a checksum, refuses (snapshot_corrupt) any file but the snapshot saved with it. */
  segmentLoad(path: string, checksum?: string): Promise<number>;
  search(handles: number[], query: Float32Array, options: NativeQueryOptions): NativeResult;
  searchBatch(handles: number[], queries: Float32Array, options: NativeQueryOptions, threads: number): Promise<NativeBatch>;
  /** A BERT encoder from its configuration and float32 weights by Hugging Face name (copied). */
  modelCreate(config: NativeModelConfig, tensors: Record<string, Float32Array>): number;
  modelRelease(handle: number): void;
  /** What the model's linear layers compute in: bf16 where the CPU multiplies it natively (auto). */
  modelPrecision(handle: number): ModelPrecision;
  /** Mean-pooled, L2-normalised embeddings (sequences x hidden) of framed token sequences. */
  modelEmbed(handle: number, tokens: Int32Array, lengths: Uint32Array, threads: number, background?: boolean): Promise<Float32Array>;
  /** The calling thread (one doing only background work: parsing, bulk decoding) to background priority, for good. */
  lowerThreadPriority(): void;
  /** One Parquet column chunk; SableError `unsupported` for what the native reader does not read (the caller falls back). */
  parquetDecodeChunk(chunk: Uint8Array, spec: NativeParquetChunkSpec): NativeParquetChunk;
}

/**
 * The kernel test hooks (native/binding/tests/, a separate addon so sable.node ships none of
 * them): one kernel of one variant at a time, to compare every variant with the serial reference.
 */
export interface KernelTestHooks {
  setErrorClass(cls: new (code: never, message: string) => Error): void;
  /** The variants this machine can run. */
  availableIsas(): string[];
  kernelDistance(isa: string, kernel: string, a: Float32Array, b: Float32Array | Uint8Array,
    vmin?: Float32Array, scale?: Float32Array): number;
  /** A batched code-scoring kernel (dot_u8_f32_batch, dot_u8_i8x2_batch) of one variant. */
  kernelBatch(isa: string, kernel: string, args: {
    codes: Uint8Array; stride: number; count: number; sel?: Uint32Array | null;
    w?: Float32Array; hi?: Int8Array; lo?: Int8Array; s?: number;
  }): Float32Array;
  /**
   * The bit-code kernel (bits_dot_u4_batch) of one variant; 64-bit words as Uint32Array
   * pairs, low half first. out[i] = sum over k < 4 of 2^k popcount(code_i & plane_k).
   */
  kernelBits(isa: string, args: { planes: Uint32Array; codes: Uint32Array; words: number; count: number; sel?: Uint32Array | null }): Uint32Array;
  /** The k-means assignment tile of one variant (keys: (l2 ? ||c||^2 : 0) - 2 <x, c>). */
  kernelArgmin(isa: string, points: Float32Array, centroids: Float32Array, dim: number, l2: boolean):
    { labels: Uint32Array; keys: Float32Array };
  /** a (m x k) * w (n x k)^T + bias through one variant's gemm_f32_panels. */
  kernelGemm(isa: string, a: Float32Array, w: Float32Array, bias: Float32Array | null, k: number): Float32Array;
  /** The same with a and w rounded to bfloat16: the AVX512-BF16 tile (unsupported without it) or its plain-loop reference. */
  kernelGemmBf16(variant: 'native' | 'reference', a: Float32Array, w: Float32Array, bias: Float32Array | null, k: number): Float32Array;
  /** x through one variant's gelu_f32 or softmax_f32 (a copy). */
  kernelElementwise(isa: string, kernel: 'gelu' | 'softmax', x: Float32Array): Float32Array;
  /** Floats narrowed to halves, or halves widened to floats, by one variant. */
  kernelHalves(isa: string, values: Float32Array): Uint16Array;
  kernelHalves(isa: string, values: Uint16Array): Float32Array;
}

export type ModelPrecision = 'f32' | 'bf16';

export interface NativeModelConfig {
  vocab: number;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
  maxPositions: number;
  typeVocab: number;
  layerNormEps: number;
  /** auto (the default): bf16 where the CPU has AVX512-BF16, else f32. */
  precision?: ModelPrecision | 'auto';
}

const require = createRequire(import.meta.url);
// dist/engine/native.js -> native/build/Release/sable.node
export const native: NativeAddon = require('../../native/build/Release/sable.node');
native.setErrorClass(SableError);
checkNativeVocabulary(native.enumerations());
const unregistered = native.errorCodes().filter((c) => !isErrorCode(c));
if (unregistered.length > 0) throw new Error(`the native core raises codes missing from errors/codes.ts: ${unregistered.join(', ')}`);

let kernelHooks: KernelTestHooks | undefined;
/** Tests only: the kernel test hooks' addon, loaded on the first call (the service never loads it). */
export function kernelTestHooks(): KernelTestHooks {
  if (!kernelHooks) {
    // dist/engine/native.js -> native/build/Release/sable_kernel_tests.node
    kernelHooks = require('../../native/build/Release/sable_kernel_tests.node') as KernelTestHooks;
    kernelHooks.setErrorClass(SableError);
  }
  return kernelHooks;
}
