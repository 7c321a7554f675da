/** `sable-retrieval/client`: the typed HTTP client. */
export { OPERATIONS, SableApiError, SableClient, type ClientOptions } from './client.js';
export { randomId } from './random-id.js';
export { resumingChunks, sseFrames, type Resumption, type SseFrame } from './stream.js';
export type * from './types.js';
