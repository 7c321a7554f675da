export { SearchPool, type SearchPoolOptions } from './search-pool.js';
export { EmbedPool } from './embed-pool.js';
export { ParquetPool } from './parquet/parquet-pool.js';
export type { GroupData, MetadataColumn } from './parquet/group.js';
export type { FileShape, LoadProblem } from './parquet/shape.js';
