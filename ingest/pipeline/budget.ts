/**
 * How long chunks may be for a dataset's embedding model, in the local model's word pieces.
 * The local model sees 256 tokens, [CLS] and [SEP] included: a chunk of at most 254 is embedded
 * whole (never cut into averaged windows); chunks aim at 200 with 40 of overlap. Remote models
 * take longer texts; 512 pieces keeps chunks focused enough to retrieve well.
 */
import { LOCAL_MODEL } from '../../engine/index.js';
import type { ChunkingOptions } from '../parse/chunker.js';

const LOCAL: ChunkingOptions = { maxTokens: LOCAL_MODEL.maxTokens - 2, targetTokens: 200, overlapTokens: 40 };
const REMOTE: ChunkingOptions = { maxTokens: 512, targetTokens: 400, overlapTokens: 64 };

export function chunkingFor(provider: string): ChunkingOptions {
  return provider === 'local' ? LOCAL : REMOTE;
}
