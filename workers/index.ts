export { SearchPool, mergeResults, type SearchPoolOptions } from './search-pool.js';
