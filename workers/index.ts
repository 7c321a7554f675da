export { SearchPool, mergeResults, type SearchPoolOptions } from './search-pool.js';
export { EmbedPool } from './embed-pool.js';
