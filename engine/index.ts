export { Engine, type EngineOptions } from './engine.js';
export { Dataset, type SearchPlan } from './dataset.js';
export { SableError } from './errors.js';
export { native, type ColumnType } from './native.js';
export type * from './types.js';
