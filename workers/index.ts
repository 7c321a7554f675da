export { SearchPool, type SearchPoolOptions } from './search-pool.js';
export { EmbedPool } from './embed-pool.js';
export { ParquetPool } from './parquet/parquet-pool.js';
export type { GroupData, MetadataColumn } from './parquet/group.js';
export type { FileShape, LoadProblem } from './parquet/shape.js';
export { ParsePool, type ParsePoolOptions } from './parse/parse-pool.js';
export type { ParseResult, ParseTask } from './parse/parse-worker.js';
export type { Chunk, ChunkingOptions } from './parse/chunker.js';
export type { Selectors } from './parse/formats/html.js';
