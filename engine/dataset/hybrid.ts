/**
 * Keyword (BM25 over the `text` metadata) and hybrid search: dense and keyword candidates fused
 * on normalised scores (fusion.ts). The keyword index is built from LMDB on first use.
 */
import { invalid } from '../../errors/codes.js';
import { fuse, type FusedHit } from '../fusion.js';
import type { KeywordIndex } from '../keyword/bm25.js';
import { rebuildKeywordIndex } from '../keyword/persist.js';
import { native } from '../native.js';
import type { Hit, Receipt, SearchOptions, ShardRunner } from '../types.js';
import { DEFAULT_TOP_K, MAX_TOP_K } from '../vocabulary.js';
import type { DatasetCore } from './core.js';
import { matchIds } from './scan.js';
import { checkQuery, execute, plan } from './search.js';

/** The BM25 index, built from LMDB on first use with no write interleaving. */
function keywordIndex(core: DatasetCore): Promise<KeywordIndex> {
  core.keywordBuild ??= core
    .exclusive(async () => (core.keyword = await rebuildKeywordIndex(core.storage, core.uid)))
    .catch((e) => {
      core.keywordBuild = null;
      throw e;
    });
  return core.keywordBuild;
}

/** Scores of the ids' vectors against a query (NaN for ids without a live vector). */
export function scoreIds(core: DatasetCore, ids: Float64Array, query: Float32Array): Float32Array {
  checkQuery(core, query, 1);
  const out = new Float32Array(ids.length).fill(NaN);
  for (const p of core.partitions) {
    const s = native.segmentScore(p.handle, ids, query);
    for (let i = 0; i < s.length; i++) if (!Number.isNaN(s[i])) out[i] = s[i];
  }
  return out;
}

/** Keyword (BM25) search over the `text` metadata, with the same filters as vector search. */
export async function keywordSearch(core: DatasetCore, text: string, opts: SearchOptions = {}): Promise<{ id: number; score: number }[]> {
  core.checkOpen();
  if (typeof text !== 'string') throw invalid('the keyword query must be a string');
  const { options } = plan(core, opts);
  const index = await keywordIndex(core);
  const k = options.k;
  if (!options.predicates?.length) return index.search(text, k);
  // Filters live in the native columns: ask for more candidates until k pass or none are left.
  for (let want = k * 4; ; want *= 4) {
    const found = index.search(text, want);
    const mask = matchIds(core, Float64Array.from(found, (h) => h.id), options.predicates);
    const passed = found.filter((_, i) => mask[i]);
    if (passed.length >= k || found.length < want) return passed.slice(0, k);
  }
}

/**
 * Dense plus keyword search fused on normalised scores; `alpha` 1 is pure vector, 0 pure
 * keyword. The dense part runs as any vector search does (here, or on `runner`'s threads).
 */
export async function hybridSearch(
  core: DatasetCore,
  query: Float32Array | null,
  text: string,
  opts: SearchOptions & { alpha: number; pool?: boolean },
  runner?: ShardRunner,
): Promise<{ hits: (Hit & Omit<FusedHit, 'id' | 'score'>)[]; receipt: Receipt | null; keyword_candidates: number }> {
  if (!(opts.alpha >= 0 && opts.alpha <= 1)) throw invalid('alpha must be between 0 and 1');
  const topK = opts.topK ?? DEFAULT_TOP_K;
  // Fusion normalises over the candidate pool, so its depth decides the order: a floor of 100
  // keeps top_k 5 the first five of top_k 20 (pools of 40 and 80 ordered them apart, which cost
  // bench:qa's questions 3 points of recall@1).
  const depth = Math.min(MAX_TOP_K, Math.max(topK * 4, 100));
  const dense = query ? await execute(core, query, { ...opts, topK: depth, includeMetadata: false }, runner) : null;
  const keyword = await keywordSearch(core, text, { ...opts, topK: depth });
  const candidates = new Map<number, { id: number; dense: number; keyword: number }>();
  for (const h of dense?.hits ?? []) candidates.set(h.id, { id: h.id, dense: h.score, keyword: 0 });
  const keywordOnly: number[] = [];
  for (const h of keyword) {
    const c = candidates.get(h.id);
    if (c) c.keyword = h.score;
    else {
      candidates.set(h.id, { id: h.id, dense: NaN, keyword: h.score });
      keywordOnly.push(h.id);
    }
  }
  if (query && keywordOnly.length > 0) {
    const ids = Float64Array.from(keywordOnly);
    const scores = scoreIds(core, ids, query);
    ids.forEach((id, i) => (candidates.get(id)!.dense = scores[i]));
  }
  const fused = fuse([...candidates.values()], query ? opts.alpha : 0, opts.pool ? candidates.size : topK);
  const includeMetadata = opts.includeMetadata ?? true;
  const hits = fused.map((f) => ({
    ...f,
    ...(includeMetadata ? { metadata: core.storage.meta.get([core.uid, f.id]) ?? {} } : {}),
  }));
  return { hits, receipt: dense?.receipt ?? null, keyword_candidates: keyword.length };
}
