/**
 * The BM25 formula, defined once for the keyword index (bm25.ts, which hoists the per-term and
 * per-document parts out of its posting loop) and the local lexical reranker (retrieval/rerank).
 */

/** Term-frequency saturation and length normalisation: Lucene's and Elasticsearch's defaults. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Lucene's IDF of a term in `df` of `n` documents: never negative, so a common term still counts a little. */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** One term's score in one document: `tf` occurrences in `docLen` tokens, `avgLen` the corpus mean. */
export function bm25TermScore(idf: number, tf: number, docLen: number, avgLen: number): number {
  return idf * ((tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * docLen) / avgLen)));
}
