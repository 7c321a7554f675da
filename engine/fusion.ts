/**
 * Hybrid fusion of dense and keyword candidates on normalised scores (raw BM25 and distances
 * live on unrelated scales, so a raw sum would let one side drown the other). Dense distances
 * are min-max normalised to a similarity in [0, 1] over the candidate set; BM25 scores are divided
 * by the best one. Each hit keeps both contributions, so a caller can see why it ranked.
 */
export interface HybridCandidate {
  id: number;
  /** Distance (ascending is better); NaN when the id has no vector. */
  dense: number;
  /** BM25 score (higher is better); 0 when the text does not match. */
  keyword: number;
}

export interface FusedHit {
  id: number;
  /** 1 - fused score: ascending like every other score of the engine. */
  score: number;
  dense_score: number | null;
  keyword_score: number;
  dense_contribution: number;
  keyword_contribution: number;
}

export function fuse(candidates: HybridCandidate[], alpha: number, k: number): FusedHit[] {
  let lo = Infinity;
  let hi = -Infinity;
  let best = 0;
  for (const c of candidates) {
    if (!Number.isNaN(c.dense)) {
      lo = Math.min(lo, c.dense);
      hi = Math.max(hi, c.dense);
    }
    best = Math.max(best, c.keyword);
  }
  const span = hi - lo;
  const fused = candidates.map((c) => {
    const denseSim = Number.isNaN(c.dense) ? 0 : span > 0 ? (hi - c.dense) / span : 1;
    const keywordSim = best > 0 ? c.keyword / best : 0;
    const dense_contribution = alpha * denseSim;
    const keyword_contribution = (1 - alpha) * keywordSim;
    return {
      id: c.id,
      score: 1 - (dense_contribution + keyword_contribution),
      dense_score: Number.isNaN(c.dense) ? null : c.dense,
      keyword_score: c.keyword,
      dense_contribution,
      keyword_contribution,
    };
  });
  fused.sort((a, b) => a.score - b.score || a.id - b.id);
  return fused.slice(0, k);
}
